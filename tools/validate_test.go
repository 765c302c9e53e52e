package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func jsonTool(t testing.TB, schema string) *Tool {
	t.Helper()
	tool, err := NewJSON(Config{Name: "t", Description: "test tool"}, json.RawMessage(schema), noop)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func prop(schema string) string {
	return `{"type":"object","properties":{"v":` + schema + `}}`
}

// TestCoercionPlainSchemas is SPEC §3.3 "Observed with plain schemas", row
// by row.
func TestCoercionPlainSchemas(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		in     any
		want   any // nil with fail set: a validation error
		fail   bool
	}{
		{"number from numeric string", `{"type":"number"}`, "5", 5.0, false},
		{"number from empty string fails", `{"type":"number"}`, "", nil, true},
		{"number from null", `{"type":"number"}`, nil, 0.0, false},
		{"number from true", `{"type":"number"}`, true, 1.0, false},
		{"number from spaced string", `{"type":"number"}`, " 7 ", 7.0, false},
		{"number from exponent", `{"type":"number"}`, "1e3", 1000.0, false},
		{"number from hex", `{"type":"number"}`, "0x10", 16.0, false},
		{"number from word fails", `{"type":"number"}`, "abc", nil, true},
		{"integer from string", `{"type":"integer"}`, "3", 3.0, false},
		{"integer from fraction string fails", `{"type":"integer"}`, "3.5", nil, true},
		{"boolean from 1 string fails", `{"type":"boolean"}`, "1", nil, true},
		{"boolean from true string", `{"type":"boolean"}`, "true", true, false},
		{"boolean from 0", `{"type":"boolean"}`, 0.0, false, false},
		{"boolean from null", `{"type":"boolean"}`, nil, false, false},
		{"string from number", `{"type":"string"}`, 5.0, "5", false},
		{"string from fraction", `{"type":"string"}`, 0.5, "0.5", false},
		{"string from null", `{"type":"string"}`, nil, "", false},
		{"string from bool", `{"type":"string"}`, true, "true", false},
		{"string from object fails", `{"type":"string"}`, map[string]any{"a": 1.0}, nil, true},
		{"type list keeps matching string", `{"type":["number","string"]}`, "5", "5", false},
		{"type list coerces true", `{"type":["number","string"]}`, true, 1.0, false},
		{"null or string keeps empty", `{"type":["null","string"]}`, "", "", false},
		{"null from empty string", `{"type":"null"}`, "", nil, false},
		{"integer array", `{"type":"array","items":{"type":"integer"}}`, []any{"1", "2"}, []any{1.0, 2.0}, false},
		{"tuple items", `{"type":"array","prefixItems":[{"type":"number"},{"type":"string"}]}`, []any{"1", 2.0}, []any{1.0, "2"}, false},
		{"anyOf number first", `{"anyOf":[{"type":"number"},{"type":"boolean"}]}`, "1", 1.0, false},
		{"anyOf boolean second", `{"anyOf":[{"type":"number"},{"type":"boolean"}]}`, "true", true, false},
		{"oneOf", `{"oneOf":[{"type":"integer"},{"type":"null"}]}`, "7", 7.0, false},
		{"allOf", `{"allOf":[{"type":"integer"},{"minimum":1}]}`, "7", 7.0, false},
		{"nested object", `{"type":"object","properties":{"x":{"type":"number"}}}`, map[string]any{"x": "2"}, map[string]any{"x": 2.0}, false},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"integer"}}`, map[string]any{"a": "1"}, map[string]any{"a": 1.0}, false},
		{"extra keys kept", `{"type":"object","properties":{"x":{"type":"number"}}}`, map[string]any{"extra": 1.0}, map[string]any{"extra": 1.0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := jsonTool(t, prop(tc.schema))
			got, err := tool.validateArguments(map[string]any{"v": tc.in})
			if tc.fail {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("got %v, %v; want a validation error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if want := map[string]any{"v": tc.want}; !reflect.DeepEqual(got, want) {
				t.Fatalf("got %#v, want %#v", got, want)
			}
		})
	}
}

func TestCoercionFollowsRefs(t *testing.T) {
	tool := jsonTool(t, `{"type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},"properties":{"p":{"$ref":"#/$defs/P"}}}`)
	got, err := tool.validateArguments(map[string]any{"p": map[string]any{"x": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"p": map[string]any{"x": 5.0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestViolationListing checks the path rules of SPEC §3.1 and the wording of
// each message, including several violations in one call.
func TestViolationListing(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		args   any
		want   []string // "path: message" lines, sorted
	}{
		{"missing and wrong type",
			`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"}},"required":["path","count"]}`,
			map[string]any{"count": "abc"},
			[]string{"count: must be integer", "path: must have required properties path"}},
		{"nested required names the first missing",
			`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}}}`,
			map[string]any{"o": map[string]any{}},
			[]string{"o.x: must have required properties x, y"}},
		{"array index in path",
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"k":{"type":"integer"}}}}}}`,
			map[string]any{"a": []any{map[string]any{"k": 1.0}, map[string]any{"k": "z"}}},
			[]string{"a.1.k: must be integer"}},
		{"not an object", `{"type":"object"}`, []any{1.0}, []string{"root: must be object"}},
		{"null arguments", `{"type":"object"}`, nil, []string{"root: must be object"}},
		{"bounds", `{"type":"object","properties":{"n":{"type":"number","minimum":0},"s":{"type":"string","minLength":2}}}`,
			map[string]any{"n": -1.0, "s": "a"},
			[]string{"n: must be >= 0", "s: must not have fewer than 2 characters"}},
		{"enum", `{"type":"object","properties":{"mode":{"type":"string","enum":["r","w"]}}}`,
			map[string]any{"mode": "x"}, []string{"mode: must be equal to one of the allowed values"}},
		{"anyOf lists members", `{"type":"object","properties":{"m":{"anyOf":[{"const":"a"},{"const":"b"}]}}}`,
			map[string]any{"m": "c"},
			[]string{"m: must be equal to constant", "m: must be equal to constant", "m: must match a schema in anyOf"}},
		{"additional properties", `{"type":"object","properties":{"n":{"type":"number"}},"additionalProperties":false}`,
			map[string]any{"n": 1.0, "extra": 2.0}, []string{"root: must not have additional properties"}},
		{"type list", `{"type":"object","properties":{"n":{"type":["number","null"]}}}`,
			map[string]any{"n": "abc"}, []string{"n: must be either number or null"}},
		{"pattern, multipleOf, exclusive", `{"type":"object","properties":{"s":{"type":"string","pattern":"^a"},"m":{"type":"number","multipleOf":2},"x":{"type":"number","exclusiveMaximum":3}}}`,
			map[string]any{"s": "b", "m": 3.0, "x": 3.0},
			[]string{`m: must be multiple of 2`, `s: must match pattern "^a"`, `x: must be < 3`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := jsonTool(t, tc.schema)
			_, err := tool.validateArguments(tc.args)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want a validation error", err)
			}
			var got []string
			for _, v := range ve.Violations {
				got = append(got, v.Path+": "+v.Message)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("violations\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestValidationErrorText(t *testing.T) {
	tool := jsonTool(t, `{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"}},"required":["path","count"]}`)
	tool.cfg.Name = "count"
	_, err := tool.validateArguments(map[string]any{"count": "abc"})
	want := "Validation failed for tool \"count\":\n  - path: must have required properties path\n  - count: must be integer\n\nReceived arguments:\n{\n  \"count\": \"abc\"\n}"
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
}

func TestValidateNeverMutatesInput(t *testing.T) {
	tool := jsonTool(t, `{"type":"object","properties":{"n":{"type":"integer"},"o":{"type":"object","properties":{"b":{"type":"boolean"}}},"a":{"type":"array","items":{"type":"number"}}}}`)
	args := map[string]any{"n": "1", "o": map[string]any{"b": "true"}, "a": []any{"1", "2"}}
	before, _ := json.Marshal(args)
	if _, err := tool.validateArguments(args); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(args)
	if string(before) != string(after) {
		t.Fatalf("input changed: %s -> %s", before, after)
	}
}

func TestSchemaErrors(t *testing.T) {
	for _, schema := range []string{
		`{"$ref":"#"}`,
		`{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},"$ref":"#/$defs/A"}`,
		`{"$ref":"#/$defs/missing"}`,
		`{"$ref":"http://example.com/x"}`,
		`{"type":"string","pattern":"("}`,
		`not json`,
	} {
		if _, err := NewJSON(Config{Name: "t"}, json.RawMessage(schema), noop); err == nil {
			t.Errorf("schema %s: no error", schema)
		}
	}
}

func TestHostileArguments(t *testing.T) {
	tool := jsonTool(t, `{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/properties/a"}},"s":{"type":"string"},"n":{"type":"number"}}}`)
	deep := any("x")
	for range 10000 {
		deep = []any{deep}
	}
	big := strings.Repeat("é", 2<<20)
	cases := []any{
		map[string]any{"a": deep},
		map[string]any{"s": big},
		map[string]any{"n": json.Number("1e400")},
		map[string]any{"n": "1e400"},
		"not an object",
		nil,
		42,
	}
	for i, args := range cases {
		if _, err := tool.validateArguments(args); err == nil && i != 1 {
			t.Errorf("case %d: no error", i)
		}
	}
}

func TestTypeListDoesNotChangeMatchingValue(t *testing.T) {
	tool := jsonTool(t, prop(`{"type":["string","number"]}`))
	got, err := tool.validateArguments(map[string]any{"v": 5.0})
	if err != nil || !reflect.DeepEqual(got, map[string]any{"v": 5.0}) {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestReferenceListing pins down how the reference lists violations where
// it differs from a plain walk: a type error does not hide enum, an extra
// property that fails additionalProperties is reported at its object,
// and the text lists at most eight lines.
func TestReferenceListing(t *testing.T) {
	tests := []struct {
		schema string
		args   map[string]any
		want   []string
	}{
		{prop(`{"type":"integer","enum":[1,2],"minimum":5}`), map[string]any{"v": "q"},
			[]string{"v: must be integer", "v: must be equal to one of the allowed values"}},
		{prop(`{"type":"integer","enum":[1,2],"minimum":5}`), map[string]any{"v": 3.0},
			[]string{"v: must be >= 5", "v: must be equal to one of the allowed values"}},
		{prop(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}`),
			map[string]any{"v": map[string]any{"a": "x", "b": "y"}}, []string{"v: must not have additional properties"}},
		{prop(`{"type":"array","items":{"type":"integer"},"maxItems":1}`), map[string]any{"v": []any{"x", "y"}},
			[]string{"v.0: must be integer", "v.1: must be integer", "v: must not have more than 1 items"}},
		{prop(`{"type":"object","dependentRequired":{"a":["b"]},"propertyNames":{"pattern":"^a"}}`), map[string]any{"v": map[string]any{"a": 1.0}},
			[]string{"v: must have properties b when property a is present"}},
	}
	for _, tc := range tests {
		_, err := jsonTool(t, tc.schema).validateArguments(tc.args)
		ve, ok := err.(*ValidationError)
		if !ok {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		var got []string
		for _, v := range ve.Violations {
			got = append(got, v.Path+": "+v.Message)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s\n got %q\nwant %q", tc.schema, got, tc.want)
		}
	}
	// Twelve violations: all in Violations, eight in the text, in schema order.
	props := []string{}
	args := map[string]any{}
	for i := range 12 {
		props = append(props, fmt.Sprintf(`"p%02d":{"type":"integer"}`, 11-i))
		args[fmt.Sprintf("p%02d", i)] = "x"
	}
	tool := jsonTool(t, `{"type":"object","properties":{`+strings.Join(props, ",")+`}}`)
	_, err := tool.validateArguments(args)
	ve := err.(*ValidationError)
	if len(ve.Violations) != 12 || strings.Count(err.Error(), "\n  - ") != maxListed {
		t.Fatalf("%d violations, text:\n%v", len(ve.Violations), err)
	}
	if ve.Violations[0].Path != "p11" || !strings.HasPrefix(string(tool.Parameters()), `{"type":"object","properties":{"p11"`) {
		t.Fatalf("schema order lost: first %s, parameters %s", ve.Violations[0].Path, tool.Parameters()[:40])
	}
}

// TestPrepareSharesOnlyWhatItDidNotChange: Prepare never changes its input;
// what coercion changed is new, the rest is shared; ValidateArguments
// shares nothing.
func TestPrepareSharesOnlyWhatItDidNotChange(t *testing.T) {
	tool := Must(NewJSON(Config{Name: "t"}, json.RawMessage(`{"type":"object","properties":{
		"n":{"type":"object","properties":{"i":{"type":"integer"}}},
		"s":{"type":"object","properties":{"x":{"type":"string"}}}}}`), noop))
	raw := map[string]any{"n": map[string]any{"i": "7"}, "s": map[string]any{"x": "y"}}
	before := clone(raw)
	got, err := tool.prepare(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(raw, before) {
		t.Fatalf("input changed: %v", raw)
	}
	out := got.(map[string]any)
	if out["n"].(map[string]any)["i"] != 7.0 {
		t.Fatalf("not coerced: %v", out)
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
	if same(out, raw) || same(out["n"], raw["n"]) {
		t.Fatal("a changed map is shared with the input")
	}
	if !same(out["s"], raw["s"]) {
		t.Fatal("an unchanged map was copied")
	}
	if unchanged, _ := tool.prepare(map[string]any{"s": raw["s"]}); !same(unchanged.(map[string]any)["s"], raw["s"]) {
		t.Fatal("arguments that need nothing were copied")
	}
	deep, err := tool.validateArguments(raw)
	if err != nil {
		t.Fatal(err)
	}
	if same(deep.(map[string]any)["s"], raw["s"]) {
		t.Fatal("ValidateArguments shares a map with its input")
	}
}
