// Package airgap is the air-gap drill: one test that takes the real release
// pipeline's output through a refused and an accepted vulnerability gate,
// `reloader-mirror export`, `import` into two registries, `values`, a Helm
// install pinned by digest and a running controller, and refuses every
// tampered archive; then it upgrades: the next release exported as a delta
// against the first, imported, and installed with helm upgrade by digest
// while the controller keeps reloading. The commands it runs are the README's air-gap section.
package airgap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// Step is one timed step of the drill.
type Step struct {
	Name     string
	Duration time.Duration
}

// Recorder times steps and keeps the commands a user would type, with the
// machine-specific parts (temporary paths, loopback ports) replaced by the
// names the README uses.
type Recorder struct {
	// Log receives one line per step as it ends.
	Log io.Writer
	// Replace maps machine-specific strings to their README spelling.
	Replace map[string]string
	// Env is added to every command's environment.
	Env   []string
	Steps []Step
	// Commands are the documented commands, normalised, in order.
	Commands []string
}

// Step runs fn as the named step and records its duration.
func (r *Recorder) Step(name string, fn func() error) error {
	fmt.Fprintf(r.Log, "==> %s\n", name)
	start := time.Now()
	err := fn()
	d := time.Since(start)
	r.Steps = append(r.Steps, Step{Name: name, Duration: d})
	status := "ok"
	if err != nil {
		status = "FAILED: " + err.Error()
	}
	fmt.Fprintf(r.Log, "    %-60s %8s  %s\n", name, d.Round(10*time.Millisecond), status)
	return err
}

// Result is what a command did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Command says what to run.
type Command struct {
	Dir  string
	Path string
	Args []string
	// Doc records the command for the README; Comment goes above it.
	Doc     bool
	Comment string
	// StdoutFile is where a documented command's stdout is redirected.
	StdoutFile string
}

// Run runs c and returns its exit code and output; only failure to start is
// an error.
func (r *Recorder) Run(ctx context.Context, c Command) (Result, error) {
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), r.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return res, fmt.Errorf("running %s: %w", c.Path, err)
		}
		res.Code = ee.ExitCode()
	}
	if c.StdoutFile != "" {
		if err := os.WriteFile(c.StdoutFile, stdout.Bytes(), 0o644); err != nil {
			return res, err
		}
	}
	if c.Doc {
		r.record(c)
	}
	return res, nil
}

func (r *Recorder) record(c Command) {
	if c.Comment != "" {
		r.Commands = append(r.Commands, "# "+c.Comment)
	}
	line := strings.Join(append([]string{baseName(c.Path)}, c.Args...), " ")
	if c.StdoutFile != "" {
		line += " > " + c.StdoutFile
	}
	r.Commands = append(r.Commands, r.normalise(line))
}

// normalise replaces the longest machine-specific strings first, so a path
// inside another is replaced whole.
func (r *Recorder) normalise(s string) string {
	keys := make([]string, 0, len(r.Replace))
	for k := range r.Replace {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, r.Replace[k])
	}
	return s
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Script is the documented commands as a shell block.
func (r *Recorder) Script() string {
	return strings.Join(r.Commands, "\n") + "\n"
}
