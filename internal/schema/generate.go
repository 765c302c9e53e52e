package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	invopop "github.com/invopop/jsonschema"
)

// FromType generates the JSON Schema of t's JSON encoding with
// invopop/jsonschema, shaped the way LLM providers accept it: the root is an
// object schema with its properties at the top level (not a $ref), $defs
// holds only nested or recursive types, and $schema and $id are left out.
// Additional properties are allowed, as in the reference: a model's extra
// keys are ignored rather than refused. A type the model could not fill
// is refused, its field named (see checkGoType).
func FromType(t reflect.Type) (_ *jsonschema.Schema, err error) {
	defer func() { // invopop panics on types JSON cannot describe (chan, func)
		if p := recover(); p != nil {
			err = fmt.Errorf("schema for %v: %v", t, p)
		}
	}()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if err := checkGoType(t); err != nil {
		return nil, err
	}
	r := &invopop.Reflector{AllowAdditionalProperties: true}
	s := r.ReflectFromType(t)
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	inlineRoot(m)
	delete(m, "$schema")
	delete(m, "$id")
	raw, err = json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	var out jsonschema.Schema
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	if ordered, err := json.Marshal(s); err == nil {
		keepPropertyOrder(&out, inlineRootJSON(ordered))
	}
	return &out, nil
}

// inlineRootJSON returns the definition of the root type from invopop's
// output (which keeps field order), for keepPropertyOrder.
func inlineRootJSON(raw []byte) []byte {
	var top struct {
		Ref  string                     `json:"$ref"`
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return raw
	}
	if name, ok := strings.CutPrefix(top.Ref, "#/$defs/"); ok && top.Defs[name] != nil {
		return top.Defs[name]
	}
	return raw
}

// keepPropertyOrder records, in every schema of s, the order its
// properties have in raw (the schema's JSON text), which decoding into a
// map loses. Properties are then checked, listed and sent in the order the
// schema's author wrote them.
func keepPropertyOrder(s *jsonschema.Schema, raw []byte) {
	var node map[string]json.RawMessage
	if s == nil || json.Unmarshal(raw, &node) != nil {
		return
	}
	if props, ok := node["properties"]; ok {
		s.PropertyOrder = objectKeys(props)
		var each map[string]json.RawMessage
		if json.Unmarshal(props, &each) == nil {
			for k, sub := range s.Properties {
				keepPropertyOrder(sub, each[k])
			}
		}
	}
	if items, ok := node["items"]; ok {
		keepPropertyOrder(s.Items, items)
	}
	if addl, ok := node["additionalProperties"]; ok {
		keepPropertyOrder(s.AdditionalProperties, addl)
	}
	for _, kw := range []string{"$defs", "definitions"} {
		var defs map[string]json.RawMessage
		if json.Unmarshal(node[kw], &defs) == nil {
			target := s.Defs
			if kw == "definitions" {
				target = s.Definitions
			}
			for k, sub := range target {
				keepPropertyOrder(sub, defs[k])
			}
		}
	}
	for kw, list := range map[string][]*jsonschema.Schema{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems} {
		var raws []json.RawMessage
		if json.Unmarshal(node[kw], &raws) == nil {
			for i := range min(len(raws), len(list)) {
				keepPropertyOrder(list[i], raws[i])
			}
		}
	}
}

// objectKeys returns the keys of a JSON object in the order they appear.
func objectKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := tok.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// inlineRoot replaces a top-level {"$ref": "#/$defs/T"} by T's definition.
// The definition stays in $defs only when something still refers to it (a
// recursive type); references to it then point at the root.
func inlineRoot(m map[string]any) {
	ref, _ := m["$ref"].(string)
	defs, _ := m["$defs"].(map[string]any)
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || defs == nil {
		return
	}
	def, _ := defs[name].(map[string]any)
	if def == nil {
		return
	}
	delete(m, "$ref")
	delete(defs, name)
	for k, v := range def {
		m[k] = v
	}
	// Anything that still refers to the root type now refers to "#".
	rest, _ := json.Marshal(defs)
	own, _ := json.Marshal(def)
	needle := []byte(`"#/$defs/` + name + `"`)
	if bytes.Contains(rest, needle) || bytes.Contains(own, needle) {
		rewriteRefs(m, "#/$defs/"+name, "#")
	}
	if len(defs) == 0 {
		delete(m, "$defs")
	}
}

func rewriteRefs(v any, from, to string) {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok && r == from {
			x["$ref"] = to
		}
		for _, e := range x {
			rewriteRefs(e, from, to)
		}
	case []any:
		for _, e := range x {
			rewriteRefs(e, from, to)
		}
	}
}
