package crossprovider

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOneProviderPullsOnlyItsOwn: a program that imports agent and
// providers/openai gets no requirement from the native providers' SDKs
// (Anthropic's, Gemini's, and what they bring: OpenTelemetry, gRPC, Google
// Cloud auth) in its go.mod, whatever this module's go.mod lists. It runs
// go mod tidy on such a program, from the module cache only.
func TestOneProviderPullsOnlyItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/consumer\n\ngo 1.26\n\nrequire github.com/agentloop/agentloop v0.0.0\n\nreplace github.com/agentloop/agentloop => "+root+"\n")
	write("main.go", `package main

import (
	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers/openai"
)

func main() {
	_, _ = agent.New(agent.Options{Config: loop.Config{Provider: openai.New(openai.Options{})}})
}
`)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(gosum))                 // the checksums tidy needs, without the network
	cmd := exec.Command("go", "mod", "tidy", "-e") // -e: test-only dependencies of dependencies are not in the cache
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOSUMDB=off") // the program's graph differs from ours: sums of what it alone needs come from the module cache
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// The requirements alone, as the go command reads them: a path
	// elsewhere in the file (the replace line's folder) is no requirement.
	edit := exec.Command("go", "mod", "edit", "-json")
	edit.Dir = dir
	out, err := edit.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var parsed struct{ Require []struct{ Path string } }
	if err := json.Unmarshal(out, &parsed); err != nil {
		t.Fatal(err)
	}
	var required []string
	for _, r := range parsed.Require {
		required = append(required, r.Path)
	}
	all := strings.Join(required, "\n")
	for _, foreign := range []string{"anthropic-sdk-go", "google.golang.org/genai", "google.golang.org/grpc", "cloud.google.com", "go.opentelemetry.io", "nats", "chromedp"} {
		if strings.Contains(all, foreign) {
			t.Errorf("the program's go.mod requires %s:\n%s", foreign, mod)
		}
	}
	t.Logf("the program's go.mod:\n%s", mod)
	if !strings.Contains(all, "github.com/sashabaranov/go-openai") {
		t.Errorf("go.mod lacks the provider's own dependency:\n%s", mod)
	}
}
