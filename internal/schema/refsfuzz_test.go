package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// refGen builds documents whose schemas refer to each other in every form
// JSON Schema has, from the fuzzer's bytes: pointers (with ~0, ~1 and
// percent escapes, into definitions, properties and draft-07
// definitions), absolute and relative $id URIs, anchors and dynamic
// anchors, $dynamicRef, and now and then one that names nothing or a
// remote schema. The document (see doc) names its definitions first, so
// that most references resolve from where they stand.
type refGen struct {
	gen
	id     map[string]bool   // the definitions that have an $id
	anchor map[string]string // a definition's anchor keyword, or ""
}

// The definitions of a document: their $id when they have one, and anchor.
var refDefs = []struct{ name, id, anchor, base string }{
	{"d0", "urn:d0", "a0", ""}, {"d1", "urn:d1", "a1", ""}, {"a/b", "", "a2", ""}, {"t~x", "", "ax", ""},
	{"e0", "", "a3", "http://e.com/x/r"}, {"e1", "e1.json", "a4", "http://e.com/x/r"},
}

// badRefs name nothing, or a schema outside the document.
var badRefs = []string{"#/not", "#/$defs/missing", "http://other.example/s.json", "#/$defs/d0/", "#/items/0", "#/$defs/a%2Fb", "#nowhere", "other.json"}

// refs returns references that resolve from a schema whose base is base
// ("" for the root's).
func (g *refGen) refs(base string) []string {
	out := []string{"#", "http://e.com/x/r", "http://e.com/x/r#/$defs/e0", "http://e.com/x/r#/%24defs/e1"}
	if base == "" {
		out = append(out, "#/properties/p", "#/properties/q", "#/$defs/d0", "#/%24defs/d1", "#/$defs/a~1b", "#/$defs/a%7E1b",
			"#/$defs/t~0x", "#/$defs/t%7E0x", "#/$defs/dd/definitions/g", "#/$defs/r")
	}
	if base == "http://e.com/x/r" {
		out = append(out, "#/$defs/e0", "#/%24defs/e1", "r#/$defs/e0")
	}
	if base == "http://e.com/x/e1.json" {
		out = append(out, "r", "r#/$defs/e0")
	}
	for _, d := range refDefs {
		full := ""
		if g.id[d.name] {
			full = d.id
			if d.base != "" {
				full = "http://e.com/x/" + d.id
			}
		}
		if full != "" {
			out = append(out, full, full+"#")
		}
		if g.anchor[d.name] == "" {
			continue
		}
		owner := d.base // the resource the anchor belongs to
		if full != "" {
			owner = full
		}
		if owner == base {
			out = append(out, "#"+d.anchor)
		}
		if owner != "" {
			out = append(out, owner+"#"+d.anchor)
		}
	}
	return out
}

func (g *refGen) ref(base string) string {
	if g.next()%32 == 31 {
		return badRefs[g.next()%len(badRefs)]
	}
	refs := g.refs(base)
	return refs[g.next()%len(refs)]
}

// schema is a schema that may refer to others, in place or below the
// value; base is its base URI.
func (g *refGen) schema(depth int, base string) string {
	kw := []string{}
	for range 1 + g.next()%3 {
		switch k := g.next() % 16; {
		case k < 3:
			kw = append(kw, fmt.Sprintf(`"$ref":%q`, g.ref(base)))
		case k == 3 && g.next()%4 == 0:
			kw = append(kw, fmt.Sprintf(`"$dynamicRef":%q`, g.ref(base)))
		case k == 4 && depth > 0:
			kw = append(kw, `"`+g.pick("allOf", "anyOf", "oneOf")+`":[`+g.schema(depth-1, base)+`,`+g.schema(depth-1, base)+`]`)
		case k == 5 && depth > 0:
			kw = append(kw, `"`+g.pick("not", "items", "additionalProperties", "if", "then", "contains", "propertyNames")+`":`+g.schema(depth-1, base))
		case k == 6 && depth > 0:
			kw = append(kw, `"properties":{"x":`+g.schema(depth-1, base)+`}`)
		case k == 7 && depth > 0:
			kw = append(kw, `"dependentSchemas":{"x":`+g.schema(depth-1, base)+`}`)
		case k == 8 && depth > 0 && g.next()%4 == 0:
			kw = append(kw, `"unevaluatedProperties":`+g.schema(depth-1, base))
		default:
			if plain := g.gen.schema(0); plain != "{}" {
				kw = append(kw, plain[1:len(plain)-1])
			}
		}
	}
	return "{" + strings.Join(kw, ",") + "}"
}

// def is definition i of refDefs, named by its $id (when the bytes gave
// it one) and its anchor.
func (g *refGen) def(i int) string {
	d := refDefs[i]
	base := d.base
	var names []string
	if g.id[d.name] {
		names = append(names, fmt.Sprintf(`"$id":%q`, d.id))
		base = d.id
		if d.base != "" {
			base = "http://e.com/x/" + d.id
		}
	}
	if g.anchor[d.name] != "" {
		names = append(names, fmt.Sprintf(`%q:%q`, g.anchor[d.name], d.anchor))
	}
	if s := g.schema(1, base); s != "{}" {
		names = append(names, s[1:len(s)-1])
	}
	return "{" + strings.Join(names, ",") + "}"
}

// doc is an object schema with properties p and q, $defs d0, d1, "a/b",
// "t~x", a resource r (http://e.com/x/r) holding e0 and e1, and dd holding
// draft-07 definitions g.
func (g *refGen) doc() string {
	g.id, g.anchor = map[string]bool{}, map[string]string{}
	for _, d := range refDefs {
		g.id[d.name] = d.id != "" && g.next()%2 == 0
		g.anchor[d.name] = []string{"", "$anchor", "$dynamicAnchor"}[g.next()%3]
	}
	return `{"type":"object","properties":{"p":` + g.schema(2, "") + `,"q":` + g.schema(2, "") + `},` +
		`"$defs":{"d0":` + g.def(0) + `,"d1":` + g.def(1) + `,"a/b":` + g.def(2) + `,"t~x":` + g.def(3) +
		`,"r":{"$id":"http://e.com/x/r","$defs":{"e0":` + g.def(4) + `,"e1":` + g.def(5) + `}}` +
		`,"dd":{"definitions":{"g":` + g.schema(1, "") + `}}}}`
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
	f.Fuzz(fuzzSchemaRefsOne)
}

// fuzzSchemaRefsOne is one run of FuzzSchemaRefs.
func fuzzSchemaRefsOne(t *testing.T, b []byte) {
	{
		g := &refGen{gen: gen{b: b}}
		text := g.doc()
		// google resolves the schema as the tool reads it (a key given
		// twice counts once, the last time; google's own decoding would
		// merge the two).
		s, err := parseSchema([]byte(text))
		if err != nil {
			t.Fatalf("generated %s: %v", text, err)
		}
		_, gerr := s.Resolve(&jsonschema.ResolveOptions{})
		tool, err := compileJSON(json.RawMessage(text))
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
		if _, err := tool.Check(deep.(map[string]any)); err != nil && err != ErrCheckLimit {
			if _, ok := err.(*Invalid); !ok {
				t.Fatalf("schema %s\ndeep value: %v", text, err)
			}
		}
	}
}
