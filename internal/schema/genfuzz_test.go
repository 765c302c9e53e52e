package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// gen builds JSON Schemas and values from fuzz bytes.
type gen struct {
	b []byte
	i int
}

func (g *gen) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1])
}

func (g *gen) pick(options ...string) string { return options[g.next()%len(options)] }

// schema returns a schema as JSON text, nesting at most depth levels.
func (g *gen) schema(depth int) string {
	var kw []string
	n := 1 + g.next()%4
	for range n {
		switch k := g.next() % 22; {
		case k < 4:
			kw = append(kw, `"type":"`+g.pick("string", "number", "integer", "boolean", "object", "array", "null")+`"`)
		case k == 4:
			kw = append(kw, `"type":["`+g.pick("string", "number", "integer")+`","`+g.pick("null", "boolean", "array")+`"]`)
		case k == 5:
			kw = append(kw, fmt.Sprintf(`"minimum":%d`, g.next()%10-3))
		case k == 6:
			kw = append(kw, fmt.Sprintf(`"exclusiveMaximum":%d`, g.next()%10))
		case k == 7:
			kw = append(kw, fmt.Sprintf(`"multipleOf":%s`, g.pick("2", "0.5", "3")))
		case k == 8:
			kw = append(kw, fmt.Sprintf(`"minLength":%d`, g.next()%4), fmt.Sprintf(`"maxLength":%d`, 2+g.next()%4))
		case k == 9:
			kw = append(kw, `"pattern":"`+g.pick("^a", "b$", "[0-9]")+`"`)
		case k == 10:
			kw = append(kw, `"enum":[`+g.pick(`1,"a",null`, `true,2.5`, `"x","y"`, `[1],{"a":1}`)+`]`)
		case k == 11:
			kw = append(kw, `"const":`+g.pick(`1`, `"a"`, `false`, `{"a":[1]}`))
		case k == 12 && depth > 0:
			kw = append(kw, `"properties":{"a":`+g.schema(depth-1)+`,"b":`+g.schema(depth-1)+`}`)
		case k == 13:
			kw = append(kw, `"required":["`+g.pick("a", "b")+`"]`)
		case k == 14 && depth > 0:
			kw = append(kw, `"items":`+g.schema(depth-1))
		case k == 15 && depth > 0:
			kw = append(kw, `"additionalProperties":`+g.pick("false", "true", g.schema(depth-1)))
		case k == 16 && depth > 0:
			kw = append(kw, `"`+g.pick("allOf", "anyOf", "oneOf")+`":[`+g.schema(depth-1)+`,`+g.schema(depth-1)+`]`)
		case k == 17 && depth > 0:
			kw = append(kw, `"not":`+g.schema(depth-1))
		case k == 18 && depth > 0:
			kw = append(kw, `"if":`+g.schema(depth-1)+`,"then":`+g.schema(depth-1)+`,"else":`+g.schema(depth-1))
		case k == 19:
			kw = append(kw, fmt.Sprintf(`"minItems":%d`, g.next()%3), `"uniqueItems":true`)
		case k == 20 && depth > 0:
			kw = append(kw, `"contains":`+g.schema(depth-1), fmt.Sprintf(`"maxContains":%d`, 1+g.next()%2))
		case k == 21:
			kw = append(kw, `"x-unknown":`+g.pick(`1`, `"a"`), `"dependentRequired":{"a":["b"]}`)
		}
	}
	return "{" + strings.Join(kw, ",") + "}"
}

// value returns a JSON value as text.
func (g *gen) value(depth int) string {
	switch k := g.next() % 9; {
	case k == 0:
		return g.pick(`null`, `true`, `false`)
	case k == 1:
		return g.pick(`0`, `1`, `-2`, `2.5`, `6`, `1e2`, `7.0`)
	case k == 2:
		return g.pick(`"a"`, `"ab"`, `"b"`, `"a1"`, `""`, `"x"`, `"3"`, `"true"`)
	case k < 6 && depth > 0:
		return `{"a":` + g.value(depth-1) + `,"` + g.pick("b", "c") + `":` + g.value(depth-1) + `}`
	case depth > 0:
		return `[` + g.value(depth-1) + `,` + g.value(depth-1) + `]`
	}
	return `1`
}

// FuzzGeneratedSchemas builds schemas of every kind the checker knows (and
// some it does not) from the fuzzer's bytes, and values to check against
// them: wherever the compiled checker decides, its verdict on the coerced
// value must be google/jsonschema-go's, and a refusal lists a violation.
func FuzzGeneratedSchemas(f *testing.F) {
	for _, seed := range []string{"\x0c\x00\x01\x02", "\x10\x05\x03\x07\x09\x11\x04", "\x12\x12\x12\x08\x0e\x0f", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &gen{b: b}
		text := g.schema(3)
		var s jsonschema.Schema
		if json.Unmarshal([]byte(text), &s) != nil {
			return
		}
		tool, err := Compile(&s)
		if err != nil {
			return // google or the cycle check refused it
		}
		for range 4 {
			raw := g.value(3)
			var v any
			if json.Unmarshal([]byte(raw), &v) != nil {
				continue
			}
			c, ok := cloneDepth(v, MaxArgumentDepth)
			if !ok {
				continue
			}
			c, _ = coerce(c, tool.root)
			google := tool.resolved.Validate(googleView(c)) == nil
			if tool.decides && tool.root.valid(c) != google {
				t.Fatalf("schema %s\nvalue %s (coerced %v): checker says %v, google %v", text, raw, c, !google, google)
			}
			if _, err := tool.Check(v); err != nil {
				if ve, ok := err.(*Invalid); ok && len(ve.Violations) == 0 && tool.decides {
					t.Fatalf("schema %s\nvalue %s: refused with no violation listed", text, raw)
				}
			}
		}
	})
}
