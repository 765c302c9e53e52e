package mcp

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/needs"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// npmServer finds a server installed by npm ci in testdata/npm (pinned by
// its package-lock.json). Without node or the packages a test is skipped
// with a printed reason; under CI (which installs them) it fails.
func npmServer(t *testing.T, pkg string) (node, script string) {
	t.Helper()
	return needs.NPMPackage(t, "testdata/npm", "node_modules/@modelcontextprotocol/"+pkg+"/dist/index.js")
}

// TestServerEverythingStdio: the reference test server over stdio. A call
// with wrong argument types gets our validation listing and never reaches
// the server; the corrected call runs there; the server's list change
// after a client connects (its conditional tools) reaches the tool set;
// Close stops the process.
func TestServerEverythingStdio(t *testing.T) {
	node, script := npmServer(t, "server-everything")
	ts := connect(t, Options{}, Server{Name: "everything", Command: node, Args: []string{script, "stdio"}})
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
// on a free port of 127.0.0.1.
func TestServerEverythingHTTP(t *testing.T) {
	node, script := npmServer(t, "server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprint("127.0.0.1:", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the HTTP server never listened")
		}
		time.Sleep(50 * time.Millisecond)
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
	node, script := npmServer(t, "server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("tea at five"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := connect(t, Options{}, Server{Name: "files", Command: node, Args: []string{script, dir}})
	msgs, _ := run(t, ts, faux.Reply(faux.Call("r", "read_text_file", map[string]any{"path": filepath.Join(dir, "note.txt")})), faux.Reply(faux.Text("ok")))
	if got, isErr := resultText(t, msgs, "r"); isErr || !strings.Contains(got, "tea at five") {
		t.Fatalf("read: %q (stderr %q)", got, ts.Stderr("files"))
	}
}
