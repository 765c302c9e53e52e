package schema

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file holds what keeps a schema from hurting the process: the graph
// of the ways validation moves from schema to schema, refused when some
// schema applies itself to the same value again (validation would never
// end) and measured for how deep a check can go; and the list of keywords
// the compiled checker may decide alone.

// schemaGraph is a document's schemas (those of its index, by number; the
// root is 0) and the ways validation moves between them, as
// google/jsonschema-go validates.
type schemaGraph struct {
	x *schemaIndex
	// same lists, for each schema, the schemas applied to the very value
	// it is applied to: $ref and $dynamicRef (every schema they may
	// reach), allOf, anyOf, oneOf, not, if, then, else, dependentSchemas
	// and draft-07's schema dependencies. The members of anyOf and oneOf
	// are listed twice (coercion tries a member, then checks it), which
	// counts steps right and changes no depth.
	same [][]int
	// below lists the schemas applied to parts of the value (items,
	// properties, property names, ...).
	below [][]int
	// ref is the one schema each $ref names, or -1 (no $ref, or a URI
	// defined twice: the compiled checker then leaves the schema to google).
	ref []int
	// order lists the schemas so that every same edge goes forward.
	order []int
}

// sameValueFields are the Schema fields whose subschemas apply to the
// value the schema applies to; $ref and $dynamicRef are edges too.
func sameValueField(name string) bool {
	switch name {
	case "AllOf", "AnyOf", "OneOf", "Not", "If", "Then", "Else", "DependentSchemas", "DependencySchemas":
		return true
	}
	return false
}

// analyze indexes root, resolves its references and builds its graph. It
// fails when a reference names nothing in the document or validation could
// loop without descending into the value (errRefCycle).
func analyze(root *jsonschema.Schema) (*schemaGraph, error) {
	x, err := indexSchema(root)
	if err != nil {
		return nil, err
	}
	n := len(x.all)
	g := &schemaGraph{x: x, same: make([][]int, n), below: make([][]int, n), ref: make([]int, n)}
	type field struct {
		index []int
		same  bool
		twice bool // anyOf, oneOf: coercion tries a member, then checks it
	}
	var fields []field
	for _, sf := range fieldsOfSchema.sub {
		switch sf.name {
		case "Defs", "Definitions", "ContentSchema": // not applied to the value
			continue
		}
		fields = append(fields, field{sf.index, sameValueField(sf.name), sf.name == "AnyOf" || sf.name == "OneOf"})
	}
	for i, s := range x.all {
		g.ref[i] = -1
		v := reflect.ValueOf(s).Elem()
		for _, f := range fields {
			edges := &g.below[i]
			if f.same {
				edges = &g.same[i]
			}
			switch c := v.FieldByIndex(f.index).Interface().(type) {
			case *jsonschema.Schema:
				if c != nil {
					*edges = append(*edges, x.at[c])
				}
			case []*jsonschema.Schema:
				for _, e := range c {
					*edges = append(*edges, x.at[e])
					if f.twice {
						*edges = append(*edges, x.at[e])
					}
				}
			case map[string]*jsonschema.Schema:
				for _, e := range c {
					*edges = append(*edges, x.at[e])
				}
			}
		}
		if s.Ref != "" {
			targets, _, err := x.resolve(i, s.Ref)
			if err != nil {
				return nil, fmt.Errorf("$ref: %w", err)
			}
			if len(targets) == 1 {
				g.ref[i] = targets[0]
			}
			g.same[i] = append(g.same[i], targets...)
		}
		if s.DynamicRef != "" {
			targets, dynamic, err := x.resolve(i, s.DynamicRef)
			if err != nil {
				return nil, fmt.Errorf("$dynamicRef: %w", err)
			}
			g.same[i] = append(append(g.same[i], targets...), x.dynamic[dynamic]...)
		}
	}
	if g.order = topoOrder(g.same); g.order == nil {
		return nil, errRefCycle
	}
	return g, nil
}

// topoOrder returns the nodes of a graph so that every edge goes forward,
// or nil when the graph has a cycle (Kahn's algorithm: no recursion).
func topoOrder(edges [][]int) []int {
	in := make([]int, len(edges))
	for _, es := range edges {
		for _, j := range es {
			in[j]++
		}
	}
	order := make([]int, 0, len(edges))
	for i, d := range in {
		if d == 0 {
			order = append(order, i)
		}
	}
	for k := 0; k < len(order); k++ {
		for _, j := range edges[order[k]] {
			if in[j]--; in[j] == 0 {
				order = append(order, j)
			}
		}
	}
	if len(order) < len(edges) {
		return nil
	}
	return order
}

// argumentDepth returns how deeply arguments may nest for a check to stay
// within MaxCheckDepth: the largest d, up to maxDepth, such that no path of
// validation through a value nested d levels deep applies more than
// MaxCheckDepth schemas one within another (every edge of the graph
// counts one; an edge below consumes a level of the value). A schema with
// a schema anywhere that exceeds the bound even for a value without
// nesting (a chain of references too long for any value), or whose root
// could not check arguments one level deep, is refused with
// errSchemaTooDeep.
//
// The paths are counted layer by layer, d = 0, 1, ..., each layer from the
// one before, in the graph's same-edge order: time linear in the schema
// per level, and no recursion.
func (g *schemaGraph) argumentDepth() (int, error) {
	n := len(g.same)
	prev, cur := make([]int, n), make([]int, n)
	for d := 0; d <= MaxArgumentDepth; d++ {
		for k := n - 1; k >= 0; k-- {
			i := g.order[k]
			longest := 0
			for _, j := range g.same[i] {
				longest = max(longest, cur[j])
			}
			if d > 0 {
				for _, j := range g.below[i] {
					longest = max(longest, prev[j])
				}
			}
			cur[i] = min(longest+1, MaxCheckDepth+1)
		}
		switch {
		case d == 0 && slices.Max(cur) > MaxCheckDepth:
			return 0, errSchemaTooDeep
		case cur[0] > MaxCheckDepth && d == 1: // not even {"p": 1} could be checked
			return 0, errSchemaTooDeep
		case cur[0] > MaxCheckDepth:
			return d - 1, nil
		case d > 0 && slices.Equal(cur, prev): // every deeper layer is this one
			return MaxArgumentDepth, nil
		}
		prev, cur = cur, prev
	}
	return MaxArgumentDepth, nil
}

// schemaFields describes the fields of google/jsonschema-go's Schema once,
// for walks that would otherwise list them by reflection at every schema.
type schemaFields struct {
	// sub are the fields that hold subschemas: *Schema, []*Schema or
	// map[string]*Schema.
	sub []subField
	// byName finds a field by its keyword's JSON name.
	byName map[string][]int
	// unimplemented are the fields of keywords the compiled checker does
	// not implement (see implemented).
	unimplemented [][]int
}

type subField struct {
	index []int
	name  string // the Go name
}

// fieldsOfSchema is computed once and never changed.
var fieldsOfSchema = func() schemaFields {
	f := schemaFields{byName: map[string][]int{}}
	for _, sf := range reflect.VisibleFields(reflect.TypeFor[jsonschema.Schema]()) {
		switch sf.Type {
		case reflect.TypeFor[*jsonschema.Schema](), reflect.TypeFor[[]*jsonschema.Schema](), reflect.TypeFor[map[string]*jsonschema.Schema]():
			f.sub = append(f.sub, subField{sf.Index, sf.Name})
		}
		if n, _, _ := strings.Cut(sf.Tag.Get("json"), ","); n != "" && n != "-" {
			f.byName[n] = sf.Index
		}
		if !implemented(sf.Name) {
			f.unimplemented = append(f.unimplemented, sf.Index)
		}
	}
	return f
}()

// checkSteps returns, for k = 0 ... depth, how many times a check may
// apply a schema to one part of a value k levels deep: the paths from the
// root that descend k times, each count at most MaxCheckSteps+1; or nil
// when no count exceeds stepsFree (checks then cost time linear in the
// arguments, and are not counted). A schema that alone applies more than
// MaxCheckSteps schemas to a value is refused with errSchemaTooCostly.
// Like argumentDepth, it counts layer by layer, without recursion.
func (g *schemaGraph) checkSteps(depth int) ([]int, error) {
	n := len(g.same)
	sat := func(a, b int) int { return min(a+b, MaxCheckSteps+1) }
	// From each schema, the schemas it applies to its own value.
	local := make([]int, n)
	for k := n - 1; k >= 0; k-- {
		i := g.order[k]
		local[i] = 1
		for _, j := range g.same[i] {
			local[i] = sat(local[i], local[j])
		}
		if local[i] > MaxCheckSteps {
			return nil, errSchemaTooCostly
		}
	}
	// From the root, layer by layer.
	steps := make([]int, depth+1)
	prev, cur := make([]int, n), make([]int, n)
	free := true
	for d := 0; d <= depth; d++ {
		clear(cur)
		if d == 0 {
			cur[0] = 1
		}
		for i, es := range g.below {
			if prev[i] > 0 {
				for _, j := range es {
					cur[j] = sat(cur[j], prev[i])
				}
			}
		}
		for _, i := range g.order {
			if cur[i] > 0 {
				for _, j := range g.same[i] {
					cur[j] = sat(cur[j], cur[i])
				}
			}
		}
		for _, c := range cur {
			steps[d] = sat(steps[d], c)
		}
		free = free && steps[d] <= stepsFree
		if steps[d] == 0 {
			break // nothing applies deeper
		}
		prev, cur = cur, prev
	}
	if free {
		return nil, nil
	}
	return steps, nil
}

// eachSubschema calls f for every schema directly inside s.
func eachSubschema(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	v := reflect.ValueOf(s).Elem()
	for _, sf := range fieldsOfSchema.sub {
		switch x := v.FieldByIndex(sf.index).Interface().(type) {
		case *jsonschema.Schema:
			if x != nil {
				f(x)
			}
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

// implemented reports whether the compiled checker implements the keyword
// kept in the Schema field named field, with google/jsonschema-go's
// semantics, or the keyword cannot change a verdict (an annotation). The
// list allows; everything else, keywords added to google's Schema later
// and unknown keywords (Extra) included, leaves the verdict to google.
func implemented(field string) bool {
	switch field {
	case "ID", "Schema", "Ref", "Anchor", "DynamicAnchor", "Comment", "Defs", "Definitions", // (Schema: see decides)
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
	for _, index := range fieldsOfSchema.unimplemented {
		if !v.FieldByIndex(index).IsZero() {
			return false
		}
	}
	return true
}
