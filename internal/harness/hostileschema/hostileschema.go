// Package hostileschema makes the recursive schemas and deep values that
// the tests of internal/schema and tools play against the schema engine:
// schemas that legitimately descend into the value through every form of
// reference, and values nested as deep as asked.
//
//	schema := hostileschema.RecursiveChain(8, "")
//	args := hostileschema.DeepValue(200)
package hostileschema

import (
	"fmt"
	"strings"
)

// RecursiveChain is an object schema whose property c holds another such
// object, reached through a chain of n references inside the resource
// urn:r, by pointer, by $id, by $anchor and by percent-escaped pointer in
// turn: every level of the value costs the check n+2 schemas. variant
// "google" adds a keyword the compiled checker leaves to
// google/jsonschema-go; "dynamic" recurses through $dynamicRef.
func RecursiveChain(n int, variant string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"c":{"$ref":"urn:r#/$defs/l0"}},"$defs":{"r":{"$id":"urn:r","$defs":{`)
	for i := range n {
		var names, next string
		if i == 0 && variant == "dynamic" {
			names = `"$dynamicAnchor":"d",`
		}
		switch i % 4 {
		case 0:
			next = fmt.Sprintf("#/$defs/l%d", i+1)
		case 1:
			next = fmt.Sprintf("urn:l%d", i+1)
		case 2: // this one has its own $id: refer through urn:r
			names += fmt.Sprintf(`"$id":"urn:l%d",`, i)
			next = fmt.Sprintf("urn:r#l%d", i+1)
		default:
			names += fmt.Sprintf(`"$anchor":"l%d",`, i)
			next = fmt.Sprintf("urn:r#/%%24defs/l%d", i+1)
		}
		fmt.Fprintf(&b, `"l%d":{%s"$ref":%q},`, i, names, next)
	}
	recurse, extra := `{"$ref":"urn:r#/$defs/l0"}`, ""
	switch variant {
	case "google":
		extra = `,"unevaluatedProperties":false`
	case "dynamic":
		recurse = `{"$dynamicRef":"urn:r#d"}`
	}
	var names string
	switch n % 4 {
	case 2:
		names = fmt.Sprintf(`"$id":"urn:l%d",`, n)
	case 3:
		names = fmt.Sprintf(`"$anchor":"l%d",`, n)
	}
	fmt.Fprintf(&b, `"l%d":{%s"type":"object","properties":{"c":%s}%s}}}}}`, n, names, recurse, extra)
	return b.String()
}

// PointerRecursion is RecursiveChain with pointers only, and no $id: the
// compiled checker decides.
func PointerRecursion(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"c":{"$ref":"#/$defs/l0"}},"$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"l%d":{"allOf":[{"$ref":"#/%%24defs/l%d"}]},`, i, i+1)
	}
	fmt.Fprintf(&b, `"l%d":{"type":"object","properties":{"c":{"$ref":"#/$defs/l0"}}}}}`, n)
	return b.String()
}

// DeepValue is {"c":{"c":...{}}}, n objects deep.
func DeepValue(n int) map[string]any {
	v := map[string]any{}
	for range n - 1 {
		v = map[string]any{"c": v}
	}
	return v
}
