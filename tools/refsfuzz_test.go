package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// refForms are references in every form JSON Schema has, to the schemas
// refDoc defines: pointers (with ~0, ~1 and percent escapes, into
// definitions, properties and applicators), absolute and relative $id
// URIs, anchors and dynamic anchors, draft-07 definitions, and some that
// name nothing or a remote schema.
var refForms = []string{
	"#", "#/$defs/d0", "#/%24defs/d1", "#/$defs/a~1b", "#/$defs/t~0x", "#/$defs/t%7E0x", "#/$defs/a%2Fb",
	"urn:d0", "urn:d1#", "urn:d1#/allOf/0", "#a0", "#a1", "#a3", "urn:d0#a0",
	"http://e.com/x/r", "http://e.com/x/r#/$defs/e0", "http://e.com/x/e1.json", "http://e.com/x/r#a3",
	"e1.json", "#/$defs/e0", "r#a3",
	"#/properties/p", "#/properties/q/items", "#/$defs/d0/allOf/0", "#/definitions/g", "#/definitions/g/not",
	"#/not", "#/$defs/missing", "http://other.example/s.json", "#/$defs/d0/", "#/items/0",
}

// refGen builds documents whose schemas refer to each other in every
// form, from the fuzzer's bytes.
type refGen struct{ gen }

func (g *refGen) ref() string { return refForms[g.next()%len(refForms)] }

// schema is a schema that may refer to others, in place or below the value.
func (g *refGen) schema(depth int) string {
	kw := []string{}
	for range 1 + g.next()%3 {
		switch k := g.next() % 12; {
		case k < 3:
			kw = append(kw, fmt.Sprintf(`"$ref":%q`, g.ref()))
		case k == 3:
			kw = append(kw, fmt.Sprintf(`"$dynamicRef":%q`, g.ref()))
		case k == 4 && depth > 0:
			kw = append(kw, `"`+g.pick("allOf", "anyOf", "oneOf")+`":[`+g.schema(depth-1)+`,`+g.schema(depth-1)+`]`)
		case k == 5 && depth > 0:
			kw = append(kw, `"`+g.pick("not", "items", "additionalProperties", "if", "then", "contains", "propertyNames")+`":`+g.schema(depth-1))
		case k == 6 && depth > 0:
			kw = append(kw, `"properties":{"x":`+g.schema(depth-1)+`}`)
		case k == 7 && depth > 0:
			kw = append(kw, `"dependentSchemas":{"x":`+g.schema(depth-1)+`}`)
		case k == 8 && depth > 0:
			kw = append(kw, `"unevaluatedProperties":`+g.schema(depth-1))
		default:
			if plain := g.gen.schema(0); plain != "{}" {
				plain = plain[1 : len(plain)-1]
				kw = append(kw, plain)
			}
		}
	}
	return "{" + strings.Join(kw, ",") + "}"
}

// def is a definition, named by $id and anchors as the bytes choose.
func (g *refGen) def(id string, anchor string, depth int) string {
	s := g.schema(depth)
	var names []string
	if id != "" && g.next()%2 == 0 {
		names = append(names, fmt.Sprintf(`"$id":%q`, id))
	}
	switch g.next() % 3 {
	case 0:
		names = append(names, fmt.Sprintf(`"$anchor":%q`, anchor))
	case 1:
		names = append(names, fmt.Sprintf(`"$dynamicAnchor":%q`, anchor))
	}
	if s != "{}" {
		names = append(names, s[1:len(s)-1])
	}
	return "{" + strings.Join(names, ",") + "}"
}

// doc is an object schema with properties p and q, $defs d0, d1, "a/b",
// "t~x", a resource r (http://e.com/x/r) holding e0 and e1, and draft-07
// definitions g.
func (g *refGen) doc() string {
	return `{"type":"object","properties":{"p":` + g.schema(2) + `,"q":` + g.schema(2) + `},` +
		`"$defs":{"d0":` + g.def("urn:d0", "a0", 1) + `,"d1":` + g.def("urn:d1", "a1", 1) +
		`,"a/b":` + g.def("", "a2", 1) + `,"t~x":` + g.def("", "ax", 1) +
		`,"r":{"$id":"http://e.com/x/r","$defs":{"e0":` + g.def("", "a3", 1) + `,"e1":` + g.def("e1.json", "a4", 1) + `}}},` +
		`"definitions":{"g":` + g.schema(1) + `}}`
}

// FuzzSchemaRefs builds documents whose schemas refer to each other in
// every form, with cycles through every keyword, and values to check
// against them. Building a tool never crashes; a tool is built whenever
// google/jsonschema-go resolves the document, unless validation could loop
// without end or go deeper than MaxCheckDepth; and on a built tool,
// checking any value never crashes and the verdict is google's (which the
// compiled checker, resolving references its own way, must match where it
// decides).
func FuzzSchemaRefs(f *testing.F) {
	for _, seed := range []string{"", "\x00\x01\x00\x02", "\x00\x00\x05\x00\x01\x01\x02\x07", "\x03\x0b\x01\x0e\x04\x00\x02\x13",
		"\x01\x00\x0f\x02\x00\x10\x00\x11\x05\x00\x12\x06\x01\x14", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &refGen{gen{b: b}}
		text := g.doc()
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			t.Fatalf("generated %s: %v", text, err)
		}
		_, gerr := s.Resolve(&jsonschema.ResolveOptions{})
		tool, err := NewJSON(Config{Name: "t"}, json.RawMessage(text), noop)
		switch {
		case gerr != nil && err == nil:
			t.Fatalf("schema %s\nbuilt, but google does not resolve it: %v", text, gerr)
		case gerr != nil:
			return
		case err != nil && !errors.Is(err, errRefCycle) && !errors.Is(err, errSchemaTooDeep) && !strings.Contains(err.Error(), "not a schema"):
			t.Fatalf("schema %s\nrefused, but google resolves it: %v", text, err)
		case err != nil:
			return
		}
		for range 4 {
			raw := `{"p":` + g.value(3) + `,"q":` + g.value(3) + `,"x":` + g.value(2) + `}`
			var v map[string]any
			if json.Unmarshal([]byte(raw), &v) != nil {
				continue
			}
			_, cerr := tool.Check(v)
			c, _ := coerce(clone(v), tool.root)
			google := tool.googleValidate(c) == nil
			if got := tool.valid(c); got != google {
				t.Fatalf("schema %s\nvalue %s (coerced %v): tool says valid=%v (checker decides: %v), google %v", text, raw, c, got, tool.decides, google)
			}
			if cerr == nil && !google {
				t.Fatalf("schema %s\nvalue %s passed the check; google refuses it", text, raw)
			}
		}
		// A value as deep as arguments may nest, through every property.
		deep := any(1.0)
		for i := range MaxArgumentDepth - 1 {
			if i%4 == 3 {
				deep = []any{deep}
			} else {
				deep = map[string]any{[]string{"p", "q", "x"}[i%3]: deep}
			}
		}
		if _, err := tool.Check(deep.(map[string]any)); err != nil && err.Error() != CheckLimitText {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("schema %s\ndeep value: %v", text, err)
			}
		}
	})
}
