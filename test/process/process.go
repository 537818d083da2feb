// Package process supervises the real third-party servers the tests run:
// each one in its own process group, killed with the test binary if that dies,
// its output kept in a log file that a failing test can print.
package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options describes one server process.
type Options struct {
	// Name labels the process in errors and logs (e.g. "kube-apiserver").
	Name string
	// Path is the binary to run.
	Path string
	Args []string
	// Env is added to a minimal environment; the test's own environment is
	// not inherited, so a developer's KUBECONFIG or proxy settings never leak in.
	Env []string
	// Dir is the working directory; the log file is written there as <Name>.log.
	Dir string
	// StdoutPath, when set, takes the process's stdout apart from the log
	// (which then holds stderr only), for a program whose two streams
	// carry different things.
	StdoutPath string
}

// Process is a running server.
type Process struct {
	opts    Options
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	mu      sync.Mutex
	waitErr error
}

// Start launches the process. It does not wait for readiness: callers poll
// whatever endpoint means ready for that server.
func Start(opts Options) (*Process, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the directory of %s: %w", opts.Name, err)
	}
	logPath := filepath.Join(opts.Dir, opts.Name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", opts.Name, err)
	}
	cmd := exec.Command(opts.Path, opts.Args...)
	cmd.Dir = opts.Dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + opts.Dir, "NO_PROXY=*"}, opts.Env...)
	cmd.Stdout = f
	cmd.Stderr = f
	if opts.StdoutPath != "" {
		out, err := os.OpenFile(opts.StdoutPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("opening the stdout file of %s: %w", opts.Name, err)
		}
		// The child holds its own copy of the descriptor; ours can go.
		defer out.Close()
		cmd.Stdout = out
	}
	// Own process group so Stop reaches children; Pdeathsig so a test binary
	// killed by `go test -timeout` takes its servers with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", opts.Name, opts.Path, err)
	}
	p := &Process{opts: opts, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// PID of the process.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// LogPath is the file holding the process's stdout and stderr.
func (p *Process) LogPath() string { return p.logPath }

// Signal sends sig to the whole process group.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling %s: %w", p.opts.Name, err)
	}
	return nil
}

// Stop asks the process to end with SIGTERM and kills it after grace.
func (p *Process) Stop(grace time.Duration) error {
	if exited, _ := p.Exited(); exited {
		return nil
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log of %s unreadable: %v)", p.opts.Name, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Describe formats the tail of the log under a heading, for test failures.
func (p *Process) Describe(n int) string {
	return fmt.Sprintf("---- %s (last %d lines of %s) ----\n%s\n", p.opts.Name, n, p.logPath, p.Tail(n))
}

// FreePort asks the kernel for an unused TCP port on 127.0.0.1. Another process
// could take it before ours binds, so callers that start a server retry.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitFor polls ready every interval until it returns nil, the process exits,
// or ctx ends. The last readiness error is returned with the log tail, which is
// what a developer needs to see when a server does not come up.
func (p *Process) WaitFor(ctx context.Context, interval time.Duration, ready func(context.Context) error) error {
	var last error
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.done:
			_, werr := p.Exited()
			return fmt.Errorf("%s exited before it was ready (%v): %v\n%s", p.opts.Name, werr, last, p.Describe(40))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v (last: %v)\n%s", p.opts.Name, ctx.Err(), last, p.Describe(40))
		case <-t.C:
		}
	}
}

// IsAddrInUse tells whether a log shows the server lost a race for its port.
func (p *Process) IsAddrInUse() bool {
	return strings.Contains(p.Tail(60), "address already in use")
}

// HTTPReady is a WaitFor probe: GET url answers 200 OK (a server's /readyz).
func HTTPReady(url string) func(context.Context) error { return HTTPReadyWith(http.DefaultClient, url) }

// HTTPReadyWith is HTTPReady through client c (one that trusts a test CA).
func HTTPReadyWith(c *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}
