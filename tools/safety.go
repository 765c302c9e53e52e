package tools

import (
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file holds what keeps a schema from hurting the process: a check
// that refuses schemas whose validation could never end, and the list of
// keywords the compiled checker may decide alone.

// loopsWithoutDescent reports whether some subschema of root applies
// itself to the same value again, through $ref, $dynamicRef, allOf, anyOf,
// oneOf, not, if/then/else or dependentSchemas, without descending into a
// part of the value first. Validating such a schema never ends:
// google/jsonschema-go would recurse until the process dies. References
// by anchor and $dynamicRef count as edges to every subschema with that
// anchor, which is never fewer edges than validation follows.
func loopsWithoutDescent(root *jsonschema.Schema) bool {
	var all []*jsonschema.Schema
	anchors := map[string][]*jsonschema.Schema{}
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		all = append(all, s)
		for _, a := range []string{s.Anchor, s.DynamicAnchor} {
			if a != "" {
				anchors[a] = append(anchors[a], s)
			}
		}
		eachSubschema(s, walk)
	}
	walk(root)
	same := func(s *jsonschema.Schema) []*jsonschema.Schema {
		out := append(append(append([]*jsonschema.Schema{s.Not, s.If, s.Then, s.Else}, s.AllOf...), s.AnyOf...), s.OneOf...)
		for _, d := range s.DependentSchemas {
			out = append(out, d)
		}
		for _, d := range s.DependencySchemas {
			out = append(out, d)
		}
		for _, ref := range []string{s.Ref, s.DynamicRef} {
			if frag, ok := strings.CutPrefix(ref, "#"); ok {
				if frag == "" || strings.HasPrefix(frag, "/") {
					out = append(out, pointerTarget(root, frag))
				} else {
					out = append(out, anchors[frag]...)
				}
			}
		}
		return out
	}
	const (
		active = 1
		done   = 2
	)
	state := map[*jsonschema.Schema]int{}
	var visit func(s *jsonschema.Schema) bool
	visit = func(s *jsonschema.Schema) bool {
		switch state[s] {
		case active:
			return true
		case done:
			return false
		}
		state[s] = active
		for _, t := range same(s) {
			if t != nil && visit(t) {
				return true
			}
		}
		state[s] = done
		return false
	}
	for _, s := range all {
		if visit(s) {
			return true
		}
	}
	return false
}

// eachSubschema calls f for every schema directly inside s.
func eachSubschema(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	v := reflect.ValueOf(s).Elem()
	for _, sf := range reflect.VisibleFields(v.Type()) {
		switch x := v.FieldByIndex(sf.Index).Interface().(type) {
		case *jsonschema.Schema:
			f(x)
		case []*jsonschema.Schema:
			for _, c := range x {
				f(c)
			}
		case map[string]*jsonschema.Schema:
			for _, c := range x {
				f(c)
			}
		}
	}
}

// pointerTarget resolves a JSON pointer ("" or "/$defs/a/properties/b")
// within root by the keywords' JSON names, or returns nil.
func pointerTarget(root *jsonschema.Schema, ptr string) *jsonschema.Schema {
	cur := reflect.ValueOf(root)
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch cur.Kind() {
		case reflect.Pointer:
			if cur.IsNil() {
				return nil
			}
			f, ok := fieldByJSONName(cur.Elem().Type(), tok)
			if !ok {
				return nil
			}
			cur = cur.Elem().FieldByIndex(f.Index)
		case reflect.Map:
			cur = cur.MapIndex(reflect.ValueOf(tok))
		case reflect.Slice:
			i := 0
			for _, c := range tok {
				if c < '0' || c > '9' {
					return nil
				}
				i = i*10 + int(c-'0')
			}
			if i >= cur.Len() {
				return nil
			}
			cur = cur.Index(i)
		default:
			return nil
		}
		if !cur.IsValid() {
			return nil
		}
	}
	s, _ := cur.Interface().(*jsonschema.Schema)
	return s
}

func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	switch name { // the keywords google keeps in fields without a JSON name
	case "items":
		return t.FieldByName("Items")
	case "dependencies":
		return t.FieldByName("DependencySchemas")
	}
	for _, sf := range reflect.VisibleFields(t) {
		if n, _, _ := strings.Cut(sf.Tag.Get("json"), ","); n == name {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

// implemented reports whether the compiled checker implements the keyword
// kept in the Schema field named field, with google/jsonschema-go's
// semantics, or the keyword cannot change a verdict (an annotation). The
// list allows; everything else, keywords added to google's Schema later
// and unknown keywords (Extra) included, leaves the verdict to google.
func implemented(field string) bool {
	switch field {
	case "ID", "Schema", "Ref", "Comment", "Defs", "Definitions", // (ID and Schema: see decides)
		"Title", "Description", "Default", "Deprecated", "ReadOnly", "WriteOnly", "Examples",
		"ContentEncoding", "ContentMediaType", "ContentSchema", "Format",
		"Type", "Types", "Enum", "Const",
		"MultipleOf", "Minimum", "Maximum", "ExclusiveMinimum", "ExclusiveMaximum",
		"MinLength", "MaxLength", "Pattern",
		"PrefixItems", "Items", "MinItems", "MaxItems", "UniqueItems", "Contains", "MinContains", "MaxContains",
		"MinProperties", "MaxProperties", "Required", "DependentRequired",
		"Properties", "PatternProperties", "AdditionalProperties", "PropertyNames", "PropertyOrder",
		"AllOf", "AnyOf", "OneOf", "Not", "If", "Then", "Else":
		return true
	}
	return false
}

// usesOnlyImplemented reports whether s sets no field outside implemented.
func usesOnlyImplemented(s *jsonschema.Schema) bool {
	v := reflect.ValueOf(s).Elem()
	for _, sf := range reflect.VisibleFields(v.Type()) {
		if !implemented(sf.Name) && !v.FieldByIndex(sf.Index).IsZero() {
			return false
		}
	}
	return true
}
