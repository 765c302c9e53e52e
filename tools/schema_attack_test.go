package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The tests in this file replay issue #25 item 1 with variants the other
// hostile tests do not list: every way a schema names a schema, cycles
// through keywords the graph must count, long chains just under and over
// the bounds, fan-out, and deep values inside the schema's own keywords.
// Each schema is built, then checked against shallow and deep arguments,
// under a timeout: it must be refused when built, or checked (passing,
// failing with a ValidationError, or with CheckLimitText); never crash the
// binary, never hang.

const d7 = `"$schema":"http://json-schema.org/draft-07/schema#",`

func deepArray(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

func chainOfDefs(n int, ref func(int) string, id func(int) string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"p":{"$ref":` + fmt.Sprintf("%q", ref(0)) + `}},"$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"a%d":{%s"$ref":%q},`, i, id(i), ref(i+1))
	}
	fmt.Fprintf(&b, `"a%d":{%s"type":"object","properties":{"p":{"$ref":%q}}}}}`, n, id(n), ref(0))
	return b.String()
}

func fanOut(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"$ref":"#"}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

func wideValue(depth, width int) map[string]any {
	v := map[string]any{}
	for range depth {
		n := map[string]any{}
		for i := range width {
			n[fmt.Sprintf("p%d", i)] = v
		}
		v = n
	}
	return v
}

func TestSchemaAttacks(t *testing.T) {
	noID := func(int) string { return "" }
	schemas := []struct{ name, schema string }{
		{"percent-escaped slash in a name", `{"type":"object","properties":{"a/b":{"$ref":"#/properties/a%2Fb"}}}`},
		{"percent-escaped tilde escape", `{"type":"object","properties":{"a~b":{"$ref":"#/properties/a%7e0b"}}}`},
		{"unicode name, percent-escaped", `{"type":"object","properties":{"é":{"not":{"$ref":"#/properties/%C3%A9"}}}}`},
		{"trailing slash", `{"type":"object","properties":{"p":{"$ref":"#/properties/p/"}}}`},
		{"array index", `{"type":"object","allOf":[{"$ref":"#/allOf/0"}]}`},
		{"array index with a leading zero", `{"type":"object","allOf":[{"$ref":"#/allOf/00"}]}`},
		{"prefixItems", `{"type":"object","properties":{"p":{"prefixItems":[{"$ref":"#/properties/p/prefixItems/0"}]}}}`},
		{"items cycle", `{"type":"object","properties":{"p":{"type":"array","items":{"$ref":"#/properties/p/items"}}}}`},
		{"draft-07 items array", `{` + d7 + `"type":"object","properties":{"p":{"items":[{"$ref":"#/properties/p/items/0"}]}}}`},
		{"draft-07 $id anchor", `{` + d7 + `"type":"object","properties":{"p":{"$ref":"#a"}},"definitions":{"a":{"$id":"#a","allOf":[{"$ref":"#a"}]}}}`},
		{"draft-07 $id anchor beside $ref", `{` + d7 + `"type":"object","properties":{"p":{"$ref":"#a"}},"definitions":{"a":{"$id":"#a","$ref":"#/definitions/b"},"b":{"$ref":"#a"}}}`},
		{"draft-07 dependencies", `{` + d7 + `"type":"object","dependencies":{"p":{"$ref":"#"}}}`},
		{"$id with a dot-dot path", `{"type":"object","properties":{"p":{"$ref":"http://e.com/x"}},"$defs":{"d":{"$id":"http://e.com/d/","$defs":{"x":{"$id":"../x","not":{"$ref":"http://e.com/x"}}}}}}`},
		{"$id relative, ref relative", `{"type":"object","properties":{"p":{"$ref":"http://e.com/d/a"}},"$defs":{"a":{"$id":"http://e.com/d/a","$defs":{"b":{"$id":"b","allOf":[{"$ref":"a#/$defs/b"}]}},"$ref":"b"}}}`},
		{"same URI twice", `{"type":"object","properties":{"p":{"$ref":"urn:d"}},"$defs":{"a":{"$id":"urn:d","type":"object"},"b":{"$id":"urn:d","$ref":"urn:d"}}}`},
		{"URI with a query", `{"type":"object","properties":{"p":{"$ref":"urn:x?q=1"}},"$defs":{"a":{"$id":"urn:x?q=1","$ref":"urn:x?q=1#"}}}`},
		{"URI case", `{"type":"object","properties":{"p":{"$ref":"HTTP://E.COM/a"}},"$defs":{"a":{"$id":"http://e.com/a","$ref":"HTTP://E.COM/a"}}}`},
		{"percent-escaped URI", `{"type":"object","properties":{"p":{"$ref":"http://e.com/%61"}},"$defs":{"a":{"$id":"http://e.com/a","$ref":"http://e.com/%61"}}}`},
		{"$anchor twice in two resources", `{"type":"object","properties":{"p":{"$ref":"urn:b#x"}},"$defs":{"a":{"$id":"urn:a","$anchor":"x"},"b":{"$id":"urn:b","$anchor":"x","oneOf":[{"$ref":"#x"}]}}}`},
		{"$dynamicRef to a plain anchor", `{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$anchor":"x","anyOf":[{"$dynamicRef":"#x"}]}}}`},
		{"$dynamicRef by pointer", `{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$dynamicAnchor":"x","not":{"$dynamicRef":"#/$defs/x"}}}}`},
		{"$dynamicRef jumping resources", `{"type":"object","$dynamicAnchor":"n","properties":{"p":{"$ref":"urn:x"}},"$defs":{"x":{"$id":"urn:x","$dynamicAnchor":"n","properties":{"q":{"$dynamicRef":"#n"}}},"y":{"$id":"urn:y","$dynamicAnchor":"n","allOf":[{"$ref":"urn:x"}]}}}`},
		{"$recursiveRef", `{"type":"object","$recursiveAnchor":true,"properties":{"p":{"$recursiveRef":"#"}},"allOf":[{"$recursiveRef":"#"}]}`},
		{"dependentSchemas cycle", `{"type":"object","properties":{"p":{"dependentSchemas":{"q":{"$ref":"#/properties/p"}}}}}`},
		{"propertyNames", `{"type":"object","propertyNames":{"$ref":"#"}}`},
		{"unevaluatedProperties", `{"type":"object","unevaluatedProperties":{"$ref":"#"},"allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"unevaluatedProperties":{"$ref":"#"}}}}`},
		{"contains", `{"type":"object","properties":{"p":{"contains":{"$ref":"#/properties/p"}}}}`},
		{"contentSchema", `{"type":"object","properties":{"p":{"contentSchema":{"$ref":"#/properties/p"}}}}`},
		{"additionalProperties", `{"type":"object","additionalProperties":{"$ref":"#"}}`},
		{"patternProperties with escapes", `{"type":"object","patternProperties":{"^a/~":{"$ref":"#/patternProperties/%5Ea~1~0"}}}`},
		{"if cycle through then", `{"type":"object","properties":{"p":{"if":{"$ref":"#/properties/p/then"},"then":{"$ref":"#/properties/p/if"}}}}`},
		{"999 pointers", chainOfDefs(990, func(i int) string { return fmt.Sprintf("#/$defs/a%d", i) }, noID)},
		{"1,001 pointers", chainOfDefs(1001, func(i int) string { return fmt.Sprintf("#/$defs/a%d", i) }, noID)},
		{"1,001 anchors", chainOfDefs(1001, func(i int) string { return fmt.Sprintf("#x%d", i) }, func(i int) string { return fmt.Sprintf(`"$anchor":"x%d",`, i) })},
		{"1,001 dynamic anchors", chainOfDefs(1001, func(i int) string { return fmt.Sprintf("#x%d", i) }, func(i int) string { return fmt.Sprintf(`"$dynamicAnchor":"x%d",`, i) })},
		{"1,001 $ids", chainOfDefs(1001, func(i int) string { return fmt.Sprintf("urn:x%d", i) }, func(i int) string { return fmt.Sprintf(`"$id":"urn:x%d",`, i) })},
		{"2,000 percent-escaped pointers", chainOfDefs(2000, func(i int) string { return fmt.Sprintf("#/%%24defs/a%d", i) }, noID)},
		{"fan-out of 2,000", fanOut(2_000)},
		{"const 9,000 deep", `{"type":"object","properties":{"p":{"const":` + deepArray(9000) + `}}}`},
		{"enum 9,000 deep", `{"type":"object","properties":{"p":{"enum":[` + deepArray(9000) + `]}}}`},
		{"default 9,000 deep", `{"type":"object","properties":{"p":{"default":` + deepArray(9000) + `}}}`},
		{"unknown keyword 9,000 deep", `{"type":"object","x-k":` + deepArray(9000) + `}`},
		{"const 200,000 deep", `{"type":"object","properties":{"p":{"const":` + deepArray(200_000) + `}}}`},
		{"properties 20,000 deep", `{"type":"object","properties":{"p":` + strings.Repeat(`{"properties":{"p":`, 20_000) + `{}` + strings.Repeat(`}}`, 20_000) + `}}`},
		{"allOf 999 deep", `{"type":"object","properties":{"p":` + strings.Repeat(`{"allOf":[`, 995) + `{}` + strings.Repeat(`]}`, 995) + `}}`},
	}
	values := []struct {
		name string
		v    map[string]any
	}{
		{"shallow", map[string]any{"p": 1.0}},
		{"deep", func() map[string]any {
			v := map[string]any{}
			for range 99 {
				v = map[string]any{"p": v, "q": []any{v}}
			}
			return v
		}()},
		{"deep arrays", map[string]any{"p": deepAny(99)}},
		{"wide", wideValue(4, 6)},
		{"too deep", map[string]any{"p": deepAny(100_000)}},
	}
	for _, tc := range schemas {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan string, 1)
			go func() {
				tool, err := NewJSON(Config{Name: "hostile"}, json.RawMessage(tc.schema), noop)
				if err != nil {
					if !strings.HasPrefix(err.Error(), `tools: tool "hostile": schema: `) {
						done <- fmt.Sprintf("refused without naming the tool: %v", err)
						return
					}
					done <- ""
					return
				}
				for _, v := range values {
					_, err := tool.Check(v.v)
					var ve *ValidationError
					if err != nil && err.Error() != CheckLimitText && !errors.As(err, &ve) {
						done <- fmt.Sprintf("%s: unexpected error %v", v.name, err)
						return
					}
				}
				done <- ""
			}()
			select {
			case msg := <-done:
				if msg != "" {
					t.Fatal(msg)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("hung")
			}
		})
	}
}

func deepAny(n int) any {
	var v any = []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}
