// Package servertest starts a real `schedsvc serve` for the Go tests: the repository's
// .venv/bin/schedsvc (make gen builds it), or $SCHEDSVC_BIN.
package servertest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is one `schedsvc serve` process.
type Server struct {
	Address string
	cmd     *exec.Cmd
	lines   chan string
}

// Binary is the schedsvc executable the tests run.
func Binary(t testing.TB) string {
	if bin := os.Getenv("SCHEDSVC_BIN"); bin != "" {
		return bin
	}
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", ".venv", "bin", "schedsvc")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no schedsvc to serve (%v): run `make gen` at the repository root, or set SCHEDSVC_BIN", err)
	}
	return bin
}

// FreePort is a port nothing listens on now, for a server restarted on the same address.
func FreePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs `schedsvc serve` on 127.0.0.1:port (0: any) with extra flags, waits until it
// listens, and stops it when the test ends.
func Start(t testing.TB, port int, flags ...string) *Server {
	t.Helper()
	args := append([]string{"serve", "--address", fmt.Sprintf("127.0.0.1:%d", port),
		"--grace-seconds", "0"}, flags...)
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		close(s.lines)
	}()
	t.Cleanup(s.Stop)
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("schedsvc serve exited before listening")
			}
			if rest, found := strings.CutPrefix(line, "schedsvc listening on port "); found {
				s.Address = "127.0.0.1:" + strings.TrimSpace(rest)
				return s
			}
		case <-deadline:
			t.Fatal("schedsvc serve did not listen within 60s")
		}
	}
}

// Stop ends the server (SIGTERM, then SIGKILL) and waits for it.
func (s *Server) Stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}
