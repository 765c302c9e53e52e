package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformance plays every scenario of CONFORMANCE_DIR (default: the
// copy in testdata) and compares the trace with the golden one. With
// CONFORMANCE_OUT set, the produced traces are also written there, for the
// suite's compare.py. The scripted tools sleep on a virtual clock (see
// clock), so scenarios take no real time, hold on a busy machine, and can
// run side by side.
func TestConformance(t *testing.T) {
	dir := os.Getenv("CONFORMANCE_DIR")
	if dir == "" {
		dir = "testdata"
	} else {
		dir = resolve(dir)
	}
	out := os.Getenv("CONFORMANCE_OUT")
	if out != "" {
		out = resolve(out)
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "scenarios", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s/scenarios (%v)", dir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var s Scenario
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("scenario: %v", err)
			}
			trace, err := Play(s)
			if err != nil {
				t.Fatalf("play: %v", err)
			}
			var got []json.RawMessage
			var buf bytes.Buffer
			for _, line := range trace {
				b, err := marshal(line)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, b)
				buf.Write(b)
				buf.WriteByte('\n')
			}
			if out != "" {
				if err := os.WriteFile(filepath.Join(out, name+".jsonl"), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := readLines(filepath.Join(dir, "golden", name+".jsonl"))
			if err != nil {
				t.Fatalf("golden trace: %v", err)
			}
			if diff := Compare(s, want, got); diff != "" {
				t.Fatalf("%s: trace differs from the reference at %s", s.About, diff)
			}
		})
	}
}

// resolve finds a relative path given by the environment: go test runs in
// the package folder, but people (and scripts) name paths from the
// module's root, so a path that does not exist here is taken from there.
func resolve(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	dir, err := os.Getwd()
	if err != nil {
		return path
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, path)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return path
		}
		dir = parent
	}
}

func readLines(path string) ([]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			lines = append(lines, append(json.RawMessage(nil), l...))
		}
	}
	return lines, sc.Err()
}
