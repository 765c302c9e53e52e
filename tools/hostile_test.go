package tools

import (
	"encoding/json"
	"errors"
	"github.com/agentloop/agentloop/internal/harness/hostileschema"
	"strings"
	"testing"
)

// The tests in this file play a hostile MCP server: schemas built to make
// validation recurse without end, through every way JSON Schema can name
// a schema, nested or chained as deep as the text allows. Each runs in
// this test process: a Go stack overflow cannot be recovered and would
// kill the test binary, so a passing run proves that none happened.

// TestHostileSchemaNamesTheTool: a schema whose validation could never
// end is refused when the tool is built, with an error naming the tool
// (internal/schema's tests try every form of it).
func TestHostileSchemaNamesTheTool(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"p":{"$ref":"#/properties/p"}}}`,
		`{"type":"object","properties":{"p":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}`,
		`{"type":"object","properties":{"p":` + strings.Repeat(`{"not":`, 9000) + `{}` + strings.Repeat(`}`, 9000) + `}}`,
	} {
		_, err := NewJSON(Config{Name: "hostile"}, json.RawMessage(schema), noop)
		if err == nil || !strings.HasPrefix(err.Error(), `tools: tool "hostile": schema: `) {
			t.Errorf("%.80s: error %v does not name the tool", schema, err)
		}
	}
}

// TestDeepArgumentsAgainstRecursiveSchemas: arguments too deep for a
// recursive schema's check fail the call with CheckLimitText, word for
// word, whether the compiled checker or google/jsonschema-go decides;
// arguments past MaxArgumentDepth get the validation listing
// (internal/schema's tests try every form).
func TestDeepArgumentsAgainstRecursiveSchemas(t *testing.T) {
	tooDeep := "must not nest objects and arrays more than 100 levels deep"
	for _, tc := range []struct {
		name   string
		schema string
		depth  int
		want   string // "" for a call that passes
	}{
		{"plain recursion, 100 deep", `{"type":"object","properties":{"c":{"$ref":"#"}}}`, 100, ""},
		{"plain recursion, 101 deep", `{"type":"object","properties":{"c":{"$ref":"#"}}}`, 101, tooDeep},
		{"chains of 20, 40 deep", hostileschema.RecursiveChain(20, ""), 40, ""},
		{"chains of 20, 60 deep", hostileschema.RecursiveChain(20, ""), 60, CheckLimitText},
		{"google decides, 60 deep", hostileschema.RecursiveChain(20, "google"), 60, CheckLimitText},
		{"pointer chains of 10, 90 deep", hostileschema.PointerRecursion(10), 90, CheckLimitText},
		{"two ways at every level, 40 deep", `{"type":"object","properties":{"c":{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}}}`, 40, CheckLimitText},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := NewJSON(Config{Name: "deep"}, json.RawMessage(tc.schema), noop)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tool.Check(hostileschema.DeepValue(tc.depth))
			var ve *ValidationError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatal("passed")
			case tc.want == CheckLimitText && err.Error() != CheckLimitText:
				t.Fatalf("error %q, want %q", err, CheckLimitText)
			case tc.want == tooDeep && (!errors.As(err, &ve) || !strings.Contains(err.Error(), tooDeep)):
				t.Fatalf("error %q, want a ValidationError %q", err, tc.want)
			}
		})
	}
}

// TestCheckLimitText is the text the model reads, word for word.
func TestCheckLimitText(t *testing.T) {
	const want = "The tool call was not executed: its arguments nest too deeply, or are too large, to be checked against the tool's schema. Send smaller, less deeply nested arguments."
	if CheckLimitText != want || errCheckLimit.Error() != want {
		t.Fatalf("CheckLimitText = %q", CheckLimitText)
	}
}

// TestDeepArgumentsBeforeTheShim: arguments nested past MaxArgumentDepth
// are refused before PrepareArguments gets its copy of them, which is
// never made.
func TestDeepArgumentsBeforeTheShim(t *testing.T) {
	called := false
	tool := Must(NewJSON(Config{Name: "shim", PrepareArguments: func(m map[string]any) (map[string]any, error) {
		called = true
		return m, nil
	}}, json.RawMessage(`{"type":"object"}`), noop))
	_, err := tool.Check(hostileschema.DeepValue(1_000_000))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "must not nest objects and arrays more than 100 levels deep") || called {
		t.Fatalf("error %v; shim called: %v", err, called)
	}
}
