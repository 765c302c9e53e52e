package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestChatCommands(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	session := filepath.Join(t.TempDir(), "s.jsonl")
	in := strings.NewReader("hello\nwhat time is it?\n/save " + session + "\n/reset\n/load " + session + "\n/nope\n")
	var out strings.Builder
	if err := chat(in, &out, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`You said "hello"`, "→ clock", "(saved 6 messages", "(conversation cleared)", "(loaded 6 messages", "unknown command /nope"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestChatInterruptStopsRunNotProgram sends a real SIGINT while a reply
// streams: the run stops, the chat goes on.
func TestChatInterruptStopsRunNotProgram(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- chat(inR, outW, true); outW.Close() }()
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
	go inW.Write([]byte(long + "\n"))
	expect("assistant: ")
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	expect("(stopped)")
	expect("> ")
	go func() { inW.Write([]byte("hi again\n")); inW.Close() }()
	expect(`You said "hi again"`)
	go io.Copy(io.Discard, lines)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
