package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/google/jsonschema-go/jsonschema"
)

// parseSchema reads a JSON Schema in time linear in its size, keeping each
// object's property order. google/jsonschema-go's own UnmarshalJSON hands
// every nested schema its whole subtree to re-read, which is quadratic in
// the nesting depth (a 2,000-level schema took seconds); here the text is
// read once into a tree, and each schema is decoded by google on its own,
// with its subschemas stood in for by true and attached afterwards.
func parseSchema(raw []byte) (*jsonschema.Schema, error) {
	s, _, err := parseSchemaTree(raw)
	return s, err
}

// Parse reads a hand-written schema as [parseSchema] does, and returns it
// with the text providers are sent: the schema as written (its keys in
// their order), without $schema and $id at its root.
func Parse(raw []byte) (*jsonschema.Schema, json.RawMessage, error) {
	s, tree, err := parseSchemaTree(raw)
	if err != nil {
		return nil, nil, err
	}
	return s, paramsOf(tree), nil
}

// paramsOf writes the schema providers are sent from the tree Parse read,
// or nil when its root is not an object.
func paramsOf(tree any) json.RawMessage {
	root, ok := tree.(*object)
	if !ok {
		return nil
	}
	kept := &object{vals: root.vals}
	for _, k := range root.keys {
		if k != "$schema" && k != "$id" {
			kept.keys = append(kept.keys, k)
		}
	}
	var b bytes.Buffer
	if writeJSON(&b, kept) != nil {
		return nil
	}
	return b.Bytes()
}

// parseSchemaTree is parseSchema that also returns the tree it read.
func parseSchemaTree(raw []byte) (*jsonschema.Schema, any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := readValue(d, 0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("data after the schema")
	}
	s, err := buildSchema(v)
	return s, v, err
}

// writeJSON writes a tree as JSON in one pass (json.Marshal would compact
// the output of every nested object again).
func writeJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if err := writeJSON(b, x.vals[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		sb, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(sb)
	}
	return nil
}

// object is a JSON object with its keys in order (writeJSON writes it).
type object struct {
	keys []string
	vals map[string]any
}

func readValue(d *json.Decoder, depth int) (any, error) {
	if depth > MaxSchemaDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", MaxSchemaDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := readValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := d.Token() // '}'
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := readValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// The keywords whose values are schemas, by shape.
var (
	oneSchemaKeys = []string{"not", "if", "then", "else", "contains", "additionalProperties", "propertyNames",
		"unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema"}
	schemaListKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeys  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// buildSchema decodes one schema of the tree.
func buildSchema(v any) (*jsonschema.Schema, error) {
	o, ok := v.(*object)
	if !ok {
		var s jsonschema.Schema
		var b bytes.Buffer
		if err := writeJSON(&b, v); err != nil {
			return nil, err
		}
		return &s, json.Unmarshal(b.Bytes(), &s) // true, false, or google's error
	}
	// The schema itself, its subschemas stood in for by true.
	shallow := &object{keys: o.keys, vals: make(map[string]any, len(o.vals))}
	for _, k := range o.keys {
		shallow.vals[k] = standIn(k, o.vals[k])
	}
	var b bytes.Buffer
	if err := writeJSON(&b, shallow); err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b.Bytes(), &s); err != nil {
		return nil, err
	}
	// Then the subschemas, each read once.
	var err error
	sub := func(v any) (*jsonschema.Schema, error) { return buildSchema(v) }
	for _, k := range oneSchemaKeys {
		if v, ok := o.vals[k]; ok {
			if *schemaFieldOf(&s, k), err = sub(v); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range schemaListKeys {
		if list, ok := o.vals[k].([]any); ok {
			dst := schemaListOf(&s, k)
			for i, v := range list {
				if (*dst)[i], err = sub(v); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, k := range schemaMapKeys {
		if m, ok := o.vals[k].(*object); ok {
			dst := schemaMapOf(&s, k)
			for _, name := range m.keys {
				if (*dst)[name], err = sub(m.vals[name]); err != nil {
					return nil, err
				}
			}
			if k == "properties" {
				s.PropertyOrder = m.keys
			}
		}
	}
	switch items := o.vals["items"].(type) {
	case []any:
		for i, v := range items {
			if s.ItemsArray[i], err = sub(v); err != nil {
				return nil, err
			}
		}
	case nil:
	default:
		if s.Items, err = sub(items); err != nil {
			return nil, err
		}
	}
	if deps, ok := o.vals["dependencies"].(*object); ok {
		for _, name := range deps.keys {
			if _, isList := deps.vals[name].([]any); !isList {
				if s.DependencySchemas[name], err = sub(deps.vals[name]); err != nil {
					return nil, err
				}
			}
		}
	}
	return &s, nil
}

// standIn replaces the subschemas in the value of keyword k by true.
func standIn(k string, v any) any {
	isSchemaKey := func(keys []string) bool {
		for _, x := range keys {
			if x == k {
				return true
			}
		}
		return false
	}
	switch {
	case isSchemaKey(oneSchemaKeys):
		return true
	case isSchemaKey(schemaListKeys), k == "items":
		if list, ok := v.([]any); ok {
			out := make([]any, len(list))
			for i := range out {
				out[i] = true
			}
			return out
		}
		if k == "items" {
			return true
		}
	case isSchemaKey(schemaMapKeys), k == "dependencies":
		if m, ok := v.(*object); ok {
			out := &object{keys: m.keys, vals: make(map[string]any, len(m.vals))}
			for _, name := range m.keys {
				if _, isList := m.vals[name].([]any); isList && k == "dependencies" {
					out.vals[name] = m.vals[name]
				} else {
					out.vals[name] = true
				}
			}
			return out
		}
	}
	return v
}

func schemaFieldOf(s *jsonschema.Schema, k string) **jsonschema.Schema {
	switch k {
	case "not":
		return &s.Not
	case "if":
		return &s.If
	case "then":
		return &s.Then
	case "else":
		return &s.Else
	case "contains":
		return &s.Contains
	case "additionalProperties":
		return &s.AdditionalProperties
	case "propertyNames":
		return &s.PropertyNames
	case "unevaluatedItems":
		return &s.UnevaluatedItems
	case "unevaluatedProperties":
		return &s.UnevaluatedProperties
	case "additionalItems":
		return &s.AdditionalItems
	default: // contentSchema
		return &s.ContentSchema
	}
}

func schemaListOf(s *jsonschema.Schema, k string) *[]*jsonschema.Schema {
	switch k {
	case "allOf":
		return &s.AllOf
	case "anyOf":
		return &s.AnyOf
	case "oneOf":
		return &s.OneOf
	default: // prefixItems
		return &s.PrefixItems
	}
}

func schemaMapOf(s *jsonschema.Schema, k string) *map[string]*jsonschema.Schema {
	switch k {
	case "properties":
		return &s.Properties
	case "patternProperties":
		return &s.PatternProperties
	case "$defs":
		return &s.Defs
	case "definitions":
		return &s.Definitions
	default: // dependentSchemas
		return &s.DependentSchemas
	}
}
