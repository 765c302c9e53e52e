package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

var fuzzSchemas = []string{
	benchSchema,
	`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}},"o":{"type":"object","properties":{"b":{"type":"boolean"}},"required":["b"]},"u":{"anyOf":[{"type":"number"},{"type":"boolean"}]},"n":{"type":["null","string"]}}}`,
	`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"number"},{"type":"string","minLength":2}]},"x":{"oneOf":[{"type":"integer","minimum":0},{"type":"string","pattern":"^[a-z]+$"}]},"m":{"type":"object","additionalProperties":{"type":"number"}}},"additionalProperties":false}`,
	`{"type":"object","$defs":{"pos":{"type":"number","exclusiveMinimum":0,"multipleOf":0.5}},"properties":{"p":{"$ref":"#/$defs/pos"},"c":{"type":"array","contains":{"const":"x"},"maxContains":2,"uniqueItems":true},"k":{"type":"object","propertyNames":{"maxLength":3},"minProperties":1},"i":{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"integer","maximum":9}}},"dependentRequired":{"p":["i"]}}`,
}

// FuzzValidate feeds arbitrary JSON arguments to validation: it must not
// panic, must not change its input, must list a violation for every
// refusal, and the compiled checker's verdict must be
// google/jsonschema-go's.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{`{}`, `{"path":"a","line":"42"}`, `{"a":["1","x"],"o":{"b":"true"},"u":"1","n":""}`,
		`{"t":["1","ab"],"x":"abc","m":{"k":"2"}}`, `[1,2]`, `null`, `"s"`, `{"line":1e400}`, `{"line":9223372036854775807}`, `{"a":[9007199254740993,"18446744073709551616"]}`} {
		for i := range fuzzSchemas {
			f.Add(uint8(i), seed)
		}
	}
	schemas := make([]*Schema, len(fuzzSchemas))
	for i, s := range fuzzSchemas {
		schemas[i] = mustCompile(f, s)
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		// Arguments as providers give them: numbers as json.Number until
		// normalized (integers beyond 2^53 stay exact).
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var args any
		if dec.Decode(&args) != nil {
			return
		}
		tool := schemas[int(which)%len(schemas)]
		before, _ := json.Marshal(args)
		_, err := tool.checkCopy(args)
		if after, _ := json.Marshal(args); string(before) != string(after) {
			t.Fatalf("input mutated: %s -> %s", before, after)
		}
		if err != nil {
			if ve := err.(*Invalid); len(ve.Violations) == 0 {
				t.Fatalf("%s refused but no violation was listed: %v", raw, ve.Cause)
			}
		}
		v, ok := cloneDepth(args, MaxArgumentDepth)
		if !ok {
			return
		}
		v, _ = coerce(v, tool.root)
		google := tool.resolved.Validate(googleView(v))
		if ours := tool.root.valid(v); ours != (google == nil) {
			t.Fatalf("%s coerced to %v: checker says valid=%v, google says %v", raw, v, ours, google)
		}
	})
}
