package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

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

type compiler struct {
	root  *jsonschema.Schema
	nodes map[*jsonschema.Schema]*node
}

// compileSchema compiles root and everything it references.
func compileSchema(root *jsonschema.Schema) (*node, error) {
	c := &compiler{root: root, nodes: map[*jsonschema.Schema]*node{}}
	n, err := c.compile(root)
	if err != nil {
		return nil, err
	}
	if hasLoop(n) {
		return nil, errRefCycle
	}
	return n, nil
}

func (c *compiler) compile(s *jsonschema.Schema) (*node, error) {
	if s == nil {
		return nil, nil
	}
	if n, ok := c.nodes[s]; ok {
		return n, nil
	}
	n := &node{s: s}
	c.nodes[s] = n
	switch {
	case s.Type != "":
		n.types = []string{s.Type}
	case len(s.Types) > 0:
		n.types = s.Types
	}
	n.typeSet = typesOf(n.types)
	var err error
	if s.Ref != "" {
		target, rerr := c.lookup(s.Ref)
		if rerr != nil {
			return nil, rerr
		}
		if n.ref, err = c.compile(target); err != nil {
			return nil, err
		}
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*node, len(s.Properties))
		n.keys = orderedKeys(s)
		for k, p := range s.Properties {
			if n.props[k], err = c.compile(p); err != nil {
				return nil, err
			}
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
		} else if n.addl, err = c.compile(a); err != nil {
			return nil, err
		}
	}
	if n.patterns, err = c.patterns(s.PatternProperties); err != nil {
		return nil, err
	}
	if n.items, err = c.compile(s.Items); err != nil {
		return nil, err
	}
	prefix := s.PrefixItems
	if len(prefix) == 0 {
		prefix = s.ItemsArray
	}
	if n.prefix, err = c.list(prefix); err != nil {
		return nil, err
	}
	if n.allOf, err = c.list(s.AllOf); err != nil {
		return nil, err
	}
	if n.anyOf, err = c.list(s.AnyOf); err != nil {
		return nil, err
	}
	if n.oneOf, err = c.list(s.OneOf); err != nil {
		return nil, err
	}
	for _, sub := range []struct {
		dst **node
		src *jsonschema.Schema
	}{{&n.not, s.Not}, {&n.cond, s.If}, {&n.then, s.Then}, {&n.els, s.Else}, {&n.contains, s.Contains}, {&n.names, s.PropertyNames}} {
		if *sub.dst, err = c.compile(sub.src); err != nil {
			return nil, err
		}
	}
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
			return nil, fmt.Errorf("pattern %q: %w", s.Pattern, err)
		}
	}
	return n, nil
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
		if out[re], err = c.compile(ps); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *compiler) list(ss []*jsonschema.Schema) ([]*node, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	out := make([]*node, len(ss))
	for i, s := range ss {
		n, err := c.compile(s)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// lookup resolves a local $ref: "#", "#/$defs/NAME", "#/definitions/NAME"
// and JSON pointers through properties and items below them.
func (c *compiler) lookup(ref string) (*jsonschema.Schema, error) {
	if ref == "#" {
		return c.root, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q: only local references (#/...) are supported", ref)
	}
	var cur any = c.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]*jsonschema.Schema:
			cur = x[tok]
		case *jsonschema.Schema:
			if x == nil {
				return nil, fmt.Errorf("$ref %q: not found", ref)
			}
			switch tok {
			case "$defs":
				cur = x.Defs
			case "definitions":
				cur = x.Definitions
			case "properties":
				cur = x.Properties
			case "items":
				cur = x.Items
			default:
				return nil, fmt.Errorf("$ref %q: not found", ref)
			}
		default:
			return nil, fmt.Errorf("$ref %q: not found", ref)
		}
	}
	s, ok := cur.(*jsonschema.Schema)
	if !ok || s == nil {
		return nil, fmt.Errorf("$ref %q: not found", ref)
	}
	return s, nil
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

// hasLoop reports whether some schema reaches itself through edges that
// apply to the same value.
func hasLoop(root *node) bool {
	const (
		unseen = iota
		active
		done
	)
	state := map[*node]int{}
	var visit func(n *node) bool
	visit = func(n *node) bool {
		switch state[n] {
		case active:
			return true
		case done:
			return false
		}
		state[n] = active
		for _, m := range n.sameValue() {
			if m != nil && visit(m) {
				return true
			}
		}
		state[n] = done
		return false
	}
	for _, n := range reachable(root) {
		if visit(n) {
			return true
		}
	}
	return false
}

func isFalse(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && (string(b) == "false" || string(b) == `{"not":{}}`)
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
// (an allow-list: see implemented), $id only at the root and $schema only
// for draft 2020-12. Anything else is judged by google/jsonschema-go on
// every call.
func decides(root *node) bool {
	for _, n := range reachable(root) {
		s := n.s
		switch {
		case !usesOnlyImplemented(s),
			s.ID != "" && n != root,
			s.Schema != "" && s.Schema != "https://json-schema.org/draft/2020-12/schema":
			return false
		}
	}
	return true
}
