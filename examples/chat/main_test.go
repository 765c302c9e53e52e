package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChatCommands(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	session := filepath.Join(t.TempDir(), "s.jsonl")
	broken := filepath.Join(t.TempDir(), "broken.jsonl")
	if err := os.WriteFile(broken, []byte("{\"role\":\"user\",\"content\":\"hi\"}\n{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader("hello\nwhat time is it?\n/save " + session + "\n/reset\n/load " + session + "\n/load " + broken + "\n/save " + session + "\n/nope\n")
	var out strings.Builder
	if err := chat(in, &out, false, "offline", 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`You said "hello". (This is the scripted model; 1 message so far.)`, "→ clock", "(saved 6 messages", "(conversation cleared)", "(loaded 6 messages",
		"not loaded, the conversation is unchanged: session line 2", "unknown command /nope"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Count(out.String(), "(saved 6 messages") != 2 {
		t.Errorf("the failed /load changed the conversation:\n%s", out.String())
	}
}

// TestChatCompacts: in a small window the chat summarises older turns and
// prints a line saying so; a saved session keeps the summary.
func TestChatCompacts(t *testing.T) {
	session := filepath.Join(t.TempDir(), "s.jsonl")
	var lines strings.Builder
	for i := range 12 {
		fmt.Fprintf(&lines, "line %d: %s\n", i, strings.Repeat("tell me more about it ", 5))
	}
	lines.WriteString("/save " + session + "\n")
	var out strings.Builder
	if err := chat(strings.NewReader(lines.String()), &out, false, "offline", 600); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "[compacted (summarize") {
		t.Fatalf("no compaction line:\n%s", out.String())
	}
	saved, err := os.ReadFile(session)
	if err != nil || !strings.Contains(string(saved), `"role":"summary"`) {
		t.Fatalf("the session keeps no summary: %v", err)
	}
}

// TestChatInterruptStopsRunNotProgram runs the chat in a child process
// (this test binary, re-run as the chat) and sends that process a real
// SIGINT while a reply streams: the run stops, the chat goes on.
func TestChatInterruptStopsRunNotProgram(t *testing.T) {
	if os.Getenv("CHAT_CHILD") == "1" {
		if err := chat(os.Stdin, os.Stdout, true, "offline", 0); err != nil {
			fmt.Fprintln(os.Stderr, "chat:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChatInterruptStopsRunNotProgram$")
	cmd.Env = append(os.Environ(), "CHAT_CHILD=1", "OPENAI_API_KEY=")
	cmd.Stderr = os.Stderr
	inW, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	wait := func() error { <-exited; return waitErr }
	t.Cleanup(func() { cmd.Process.Kill(); wait() })
	// A watchdog: a chat that hangs is killed, which ends its output.
	watchdog := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer watchdog.Stop()

	lines := bufio.NewReader(outR)
	expect := func(s string) {
		t.Helper()
		var seen strings.Builder
		for !strings.Contains(seen.String(), s) {
			b, err := lines.ReadByte()
			if err != nil {
				t.Fatalf("output ended before %q: %s", s, seen.String())
			}
			seen.WriteByte(b)
		}
	}
	expect("> ")
	long := strings.Repeat("word ", 400)
	if _, err := io.WriteString(inW, long+"\n"); err != nil {
		t.Fatal(err)
	}
	expect("assistant: ")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	expect("(stopped)")
	expect("> ")
	if _, err := io.WriteString(inW, "hi again\n"); err != nil {
		t.Fatal(err)
	}
	expect(`You said "hi again"`)
	inW.Close() // end of input: the chat exits
	go io.Copy(io.Discard, lines)
	if err := wait(); err != nil {
		t.Fatalf("the chat did not exit cleanly after the interrupt: %v", err)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 messages", 1: "1 message", 2: "2 messages", 11: "11 messages"} {
		if got := count(n, "message"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestChatProviderNames: the default build takes OpenAI's names and says
// how to get the others, whose SDKs it does not link.
func TestChatProviderNames(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	if !slices.Contains(providerNames(), "anthropic") {
		_, _, _, err := fromEnv("anthropic")
		if err == nil || !strings.Contains(err.Error(), "-tags allproviders") {
			t.Errorf("anthropic in the default build: %v", err)
		}
	}
	if _, _, ok, err := fromEnv("offline"); ok || err != nil {
		t.Errorf("offline: ok %v, err %v", ok, err)
	}
	if _, _, _, err := fromEnv("cohere"); err == nil {
		t.Error("an unknown name was accepted")
	}
}
