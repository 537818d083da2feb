// Package compat holds the proof that moving from stakater/Reloader's Helm
// chart (v2.2.x, controller v1.4.21) to this project is a non-event. Its
// tests, against a real kube-apiserver:
//
//   - render the chart with stakater's default values and user-style values
//     files (testdata/), have the apiserver admit every object (server-side
//     dry run), and compare the controller flags with the ones stakater's
//     chart renders for the same file, stated by hand per fixture;
//   - install, with the Helm SDK, a release shaped exactly like one of
//     stakater's chart (names, labels, selector), upgrade it in place to
//     this chart, and run the controller it defines until it reloads;
//   - drive a scripted sequence (reload, skip, ignored, error) and compare
//     /metrics with a table of stakater's series;
//   - start with Argo Rollouts and CSI asked for but not installed, and see
//     the controller warn, keep reloading, and pick them up once installed.
package compat
