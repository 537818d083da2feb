//go:build race

package controller_test

const raceEnabled = true
