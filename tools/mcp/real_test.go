package mcp

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/needs"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// npmServer finds a server installed by npm ci in testdata/npm (pinned by
// its package-lock.json) and returns how to run it: node, and its
// arguments up to the server's own. Every server is started with
// testdata/loopback.cjs preloaded, so that whatever it listens on is on
// 127.0.0.1 only. Without node or the packages a test is skipped with a
// printed reason; under CI (which installs them) it fails.
func npmServer(t *testing.T, pkg string) (node string, args []string) {
	t.Helper()
	node, script := needs.NPMPackage(t, "testdata/npm", "node_modules/@modelcontextprotocol/"+pkg+"/dist/index.js")
	preload, _ := filepath.Abs(filepath.Join("testdata", "loopback.cjs"))
	return node, []string{"--require", preload, script}
}

// TestServerEverythingStdio: the reference test server over stdio. A call
// with wrong argument types gets our validation listing and never reaches
// the server; the corrected call runs there; the server's list change
// after a client connects (its conditional tools) reaches the tool set;
// Close stops the process.
func TestServerEverythingStdio(t *testing.T) {
	node, args := npmServer(t, "server-everything")
	ts := connect(t, Options{}, Server{Name: "everything", Command: node, Args: append(args, "stdio")})
	set, _ := ts.Tools()
	names := map[string]bool{}
	for _, tl := range set {
		names[tl.Name()] = true
	}
	if !names["get-sum"] || !names["echo"] {
		t.Fatalf("tools %v", names)
	}
	msgs, _ := run(t, ts,
		faux.Reply(faux.Call("bad", "get-sum", map[string]any{"a": "two", "b": []any{3}})),
		faux.Reply(faux.Call("good", "get-sum", map[string]any{"a": 2, "b": "3"})),
		faux.Reply(faux.Text("5")))
	if got, isErr := resultText(t, msgs, "bad"); !isErr || !strings.HasPrefix(got, `Validation failed for tool "get-sum":`) ||
		!strings.Contains(got, "  - a: ") || !strings.Contains(got, "  - b: ") {
		t.Fatalf("the wrong call: %q", got)
	}
	if got, isErr := resultText(t, msgs, "good"); isErr || got != "The sum of 2 and 3 is 5." {
		t.Fatalf("the corrected call: %q", got)
	}
	// The server registers tools once a client is initialized and says
	// so with list_changed (sometimes before Connect's own listing ends):
	// the set is listed again, and holds them.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		set, v := ts.Tools()
		if v >= 2 && slices.ContainsFunc(set, func(tl *tools.Tool) bool { return tl.Name() == "simulate-research-query" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's list change never reached the tool set")
		}
	}
	srv := ts.servers[0]
	srv.mu.Lock()
	cmd := srv.cmd
	srv.mu.Unlock()
	ts.Close()
	if cmd.ProcessState == nil {
		t.Fatal("Close left the server's process running")
	}
}

// TestServerEverythingHTTP: the same server in its streamable HTTP mode,
// on a port of 127.0.0.1 that it picks (PORT=0) and the preload reports;
// it cannot be reached on any other address of the machine.
func TestServerEverythingHTTP(t *testing.T) {
	node, args := npmServer(t, "server-everything")
	cmd := exec.Command(node, append(args, "streamableHttp")...)
	cmd.Env = append(os.Environ(), "PORT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan string, 1)
	drained := make(chan struct{})
	go func() { // the first address it reports, then the rest unread
		defer close(drained)
		in := bufio.NewScanner(stderr)
		for in.Scan() {
			if a, ok := strings.CutPrefix(in.Text(), "loopback: listening on "); ok {
				select {
				case addrs <- a:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-drained; _ = cmd.Wait() })
	var addr string
	select {
	case addr = <-addrs:
	case <-time.After(60 * time.Second):
		t.Fatal("the HTTP server never listened")
	}
	host, port, _ := net.SplitHostPort(addr)
	if host != "127.0.0.1" {
		t.Fatalf("the server listens on %s", addr)
	}
	outside := 0
	ifaddrs, _ := net.InterfaceAddrs()
	for _, a := range ifaddrs {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.IsLinkLocalUnicast() {
			continue
		}
		outside++
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), port), 5*time.Second); err == nil {
			c.Close()
			t.Fatalf("the server can be reached on %s", ip.IP)
		}
	}
	if outside == 0 {
		t.Log("no address but loopback on this machine: nothing else to try")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ts, err := Connect(ctx, Options{}, Server{Name: "everything", URL: "http://" + addr + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	msgs, _ := run(t, ts, faux.Reply(faux.Call("e", "echo", map[string]any{"message": "over http"})), faux.Reply(faux.Text("ok")))
	if got, isErr := resultText(t, msgs, "e"); isErr || !strings.Contains(got, "over http") {
		t.Fatalf("echo: %q", got)
	}
}

// TestServerFilesystem: the filesystem server on a temporary folder reads
// a file for the agent.
func TestServerFilesystem(t *testing.T) {
	node, args := npmServer(t, "server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("tea at five"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := connect(t, Options{}, Server{Name: "files", Command: node, Args: append(args, dir)})
	msgs, _ := run(t, ts, faux.Reply(faux.Call("r", "read_text_file", map[string]any{"path": filepath.Join(dir, "note.txt")})), faux.Reply(faux.Text("ok")))
	if got, isErr := resultText(t, msgs, "r"); isErr || !strings.Contains(got, "tea at five") {
		t.Fatalf("read: %q (stderr %q)", got, ts.Stderr("files"))
	}
}
