package schema

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// node is one schema of a tool's parameters, compiled once with its $ref
// resolved, for coercion and for listing violations.
type node struct {
	s        *jsonschema.Schema
	types    []string
	typeSet  typeSet // types as a set; 0 when there is no type keyword
	ref      *node
	props    map[string]*node
	keys     []string // declared property names, in a stable order
	propList []*node  // the schemas of keys, in the same order
	reqAt    []int    // for each required name, its index in keys, or -1
	addl     *node    // additionalProperties as a schema
	addlNo   bool     // additionalProperties: false
	items    *node
	prefix   []*node
	allOf    []*node
	anyOf    []*node
	oneOf    []*node
	not      *node
	cond     *node // if
	then     *node
	els      *node
	contains *node
	names    *node // propertyNames
	pattern  *regexp.Regexp
	patterns map[*regexp.Regexp]*node
	enum     []any // enum values, normalized as clone does
	konst    []any // the const value, normalized, when there is one
}

// errRefCycle reports a schema whose $ref (or allOf/anyOf/oneOf/not) chain
// leads back to itself without descending into the value: validating any
// value against it would never end.
var errRefCycle = errors.New("schema has a $ref cycle that never descends into the value")

// compiler fills in the nodes of a document's schemas, one node per
// schema of its index, linking them by number: nothing recurses, however
// long the document's chains of references.
type compiler struct {
	g     *schemaGraph
	nodes []*node
}

// compileSchema compiles the schemas of g; the root's node comes first. A
// $ref that google/jsonschema-go may resolve to either of two schemas
// (their URI is defined twice) is not compiled.
func compileSchema(g *schemaGraph) (*node, error) {
	c := &compiler{g: g, nodes: make([]*node, len(g.x.all))}
	for i, s := range g.x.all {
		c.nodes[i] = &node{s: s}
	}
	for i, n := range c.nodes {
		if err := c.fill(i, n); err != nil {
			return nil, err
		}
	}
	return c.nodes[0], nil
}

// node returns the node of a schema of the document, or nil.
func (c *compiler) node(s *jsonschema.Schema) *node {
	if s == nil {
		return nil
	}
	return c.nodes[c.g.x.at[s]]
}

func (c *compiler) fill(i int, n *node) error {
	s := n.s
	switch {
	case s.Type != "":
		n.types = []string{s.Type}
	case len(s.Types) > 0:
		n.types = s.Types
	}
	n.typeSet = typesOf(n.types)
	if s.Ref != "" {
		t := c.g.ref[i]
		if t < 0 {
			return fmt.Errorf("$ref %q: more than one schema has its URI", s.Ref)
		}
		n.ref = c.nodes[t]
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*node, len(s.Properties))
		n.keys = orderedKeys(s)
		for k, p := range s.Properties {
			n.props[k] = c.node(p)
		}
		n.propList = make([]*node, len(n.keys))
		for i, k := range n.keys {
			n.propList[i] = n.props[k]
		}
	}
	n.reqAt = make([]int, len(s.Required))
	for i, r := range s.Required {
		n.reqAt[i] = slices.Index(n.keys, r)
	}
	if a := s.AdditionalProperties; a != nil {
		if isFalse(a) {
			n.addlNo = true
		} else {
			n.addl = c.node(a)
		}
	}
	var err error
	if n.patterns, err = c.patterns(s.PatternProperties); err != nil {
		return err
	}
	n.items = c.node(s.Items)
	prefix := s.PrefixItems
	if len(prefix) == 0 {
		prefix = s.ItemsArray
	}
	n.prefix = c.list(prefix)
	n.allOf, n.anyOf, n.oneOf = c.list(s.AllOf), c.list(s.AnyOf), c.list(s.OneOf)
	n.not, n.cond, n.then, n.els = c.node(s.Not), c.node(s.If), c.node(s.Then), c.node(s.Else)
	n.contains, n.names = c.node(s.Contains), c.node(s.PropertyNames)
	if s.Enum != nil {
		n.enum = make([]any, len(s.Enum))
		for i, e := range s.Enum {
			n.enum[i] = clone(e)
		}
	}
	if s.Const != nil {
		n.konst = []any{clone(*s.Const)}
	}
	if s.Pattern != "" {
		if n.pattern, err = regexp.Compile(s.Pattern); err != nil {
			return fmt.Errorf("pattern %q: %w", s.Pattern, err)
		}
	}
	return nil
}

func (c *compiler) patterns(pp map[string]*jsonschema.Schema) (map[*regexp.Regexp]*node, error) {
	if len(pp) == 0 {
		return nil, nil
	}
	out := make(map[*regexp.Regexp]*node, len(pp))
	for pat, ps := range pp {
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("patternProperties %q: %w", pat, err)
		}
		out[re] = c.node(ps)
	}
	return out, nil
}

func (c *compiler) list(ss []*jsonschema.Schema) []*node {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*node, len(ss))
	for i, s := range ss {
		out[i] = c.node(s)
	}
	return out
}

// sameValue returns the subschemas that apply to the very value n applies
// to ($ref, allOf, anyOf, oneOf, not, if/then/else); some may be nil.
func (n *node) sameValue() []*node {
	return append(slices.Concat(n.allOf, n.anyOf, n.oneOf), n.ref, n.not, n.cond, n.then, n.els)
}

// below returns the subschemas that apply to parts of the value: items,
// properties, and property names; some may be nil.
func (n *node) below() []*node {
	kids := append(slices.Clone(n.prefix), n.items, n.addl, n.contains, n.names)
	for _, k := range n.keys {
		kids = append(kids, n.props[k])
	}
	for _, p := range n.patterns {
		kids = append(kids, p)
	}
	return kids
}

// reachable returns every node reachable from root, root first.
func reachable(root *node) []*node {
	seen := map[*node]bool{root: true}
	out := []*node{root}
	for i := 0; i < len(out); i++ {
		for _, k := range append(out[i].sameValue(), out[i].below()...) {
			if k != nil && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// isFalse reports whether s is the schema false (google/jsonschema-go
// reads it as {"not": {}}), without writing s out: a chain of nested
// additionalProperties would cost time quadratic in its length.
func isFalse(s *jsonschema.Schema) bool {
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	rest := *s
	rest.Not = nil
	return reflect.ValueOf(rest).IsZero()
}

func orderedKeys(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) == len(s.Properties) {
		return s.PropertyOrder
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decides reports whether the compiled checker alone may decide validity
// for this schema: true when every schema reachable from root uses only
// keywords the checker implements with google/jsonschema-go's semantics
// (an allow-list: see implemented; $id and anchors only name schemas, and
// the compiled $refs were resolved by them as google resolves them) and
// $schema only for draft 2020-12. Anything else ($dynamicRef, ...) is
// judged by google/jsonschema-go on every call.
func decides(root *node) bool {
	for _, n := range reachable(root) {
		s := n.s
		switch {
		case !usesOnlyImplemented(s),
			s.Schema != "" && s.Schema != "https://json-schema.org/draft/2020-12/schema":
			return false
		}
	}
	return true
}
