package schema

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file names the schemas of a document the ways JSON Schema 2020-12
// (and draft-07) can, and resolves every $ref and $dynamicRef to the
// schemas it may lead to, as google/jsonschema-go's Resolve does: URIs
// from $id (absolute, or relative to the enclosing base), anchors
// ($anchor, $dynamicAnchor, draft-07's "$id": "#name"), and JSON pointers
// with their ~0, ~1 and percent escapes. Nothing is ever fetched: a
// reference outside the document does not resolve.

// schemaIndex is what resolution needs to know about one document.
type schemaIndex struct {
	root   *jsonschema.Schema
	draft7 bool
	all    []*jsonschema.Schema // every schema of the tree, parents first
	at     map[*jsonschema.Schema]int
	base   []int      // the index of each schema's base (the resource it belongs to)
	uri    []*url.URL // each base's URI (nil for the others)
	// byURI and anchor list every candidate: google/jsonschema-go keeps
	// one of two schemas with the same URI (or draft-07 anchor), and the
	// graph must hold the edge whichever it keeps.
	byURI  map[string][]int
	anchor map[int]map[string][]anchorAt // per base: its anchors
	// dynamic lists, by name, every schema with that $dynamicAnchor: a
	// $dynamicRef acting dynamically may reach any of them.
	dynamic map[string][]int
}

type anchorAt struct {
	at      int
	dynamic bool
}

const (
	draft7URI    = "http://json-schema.org/draft-07/schema#"
	draft7SecURI = "https://json-schema.org/draft-07/schema#"
)

// indexSchema indexes the tree at root. Its walk keeps its own stack, so a
// deeply nested schema costs heap, not goroutine stack.
func indexSchema(root *jsonschema.Schema) (*schemaIndex, error) {
	x := &schemaIndex{
		root:    root,
		draft7:  root.Schema == draft7URI || root.Schema == draft7SecURI,
		at:      map[*jsonschema.Schema]int{},
		byURI:   map[string][]int{},
		anchor:  map[int]map[string][]anchorAt{},
		dynamic: map[string][]int{},
	}
	type frame struct {
		s    *jsonschema.Schema
		base int
	}
	stack := []frame{{root, 0}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.s == nil {
			return nil, errors.New("a subschema is nil")
		}
		if _, dup := x.at[f.s]; dup {
			return nil, errors.New("the subschemas do not form a tree")
		}
		i := len(x.all)
		x.at[f.s] = i
		x.all = append(x.all, f.s)
		x.uri = append(x.uri, nil)
		base := f.base
		if i == 0 {
			base = 0
			x.uri[0] = &url.URL{}
			x.byURI[""] = []int{0}
		}
		if err := x.name(f.s, i, &base); err != nil {
			return nil, err
		}
		x.base = append(x.base, base)
		eachSubschema(f.s, func(c *jsonschema.Schema) { stack = append(stack, frame{c, base}) })
	}
	return x, nil
}

// name records what schema i (s) is called: its URI when its $id makes it
// a resource (then *base becomes i), and its anchors.
func (x *schemaIndex) name(s *jsonschema.Schema, i int, base *int) error {
	if s.ID != "" && !(x.draft7 && s.Ref != "") { // draft-07 ignores the siblings of $ref
		id, err := url.Parse(s.ID)
		if err != nil {
			return fmt.Errorf("$id %q: %w", s.ID, err)
		}
		switch {
		case id.Fragment != "" && !x.draft7:
			return fmt.Errorf("$id %q has a fragment", s.ID)
		case id.Fragment != "": // draft-07's "$id": "#name" is an anchor
			x.setAnchor(*base, strings.TrimPrefix(s.ID, "#"), i, false)
		default:
			u := x.uri[*base].ResolveReference(id)
			if !u.IsAbs() {
				return fmt.Errorf("$id %q is not an absolute URI, nor relative to one", s.ID)
			}
			x.uri[i] = u
			x.byURI[u.String()] = append(x.byURI[u.String()], i)
			*base = i
		}
	}
	if !x.draft7 {
		for _, a := range []struct {
			name    string
			dynamic bool
		}{{s.Anchor, false}, {s.DynamicAnchor, true}} {
			if a.name == "" {
				continue
			}
			if _, dup := x.anchor[*base][a.name]; dup {
				return fmt.Errorf("anchor %q is defined twice", a.name)
			}
			x.setAnchor(*base, a.name, i, a.dynamic)
			if a.dynamic {
				x.dynamic[a.name] = append(x.dynamic[a.name], i)
			}
		}
	}
	return nil
}

func (x *schemaIndex) setAnchor(base int, name string, i int, dynamic bool) {
	if x.anchor[base] == nil {
		x.anchor[base] = map[string][]anchorAt{}
	}
	x.anchor[base][name] = append(x.anchor[base][name], anchorAt{i, dynamic})
}

// resolve returns the schemas that ref, the $ref or $dynamicRef of schema
// i, may name (more than one only when a URI or a draft-07 anchor is
// defined twice), and the anchor's name when it names a dynamic anchor (a
// $dynamicRef to it may then act dynamically). It fails when ref names
// nothing in the document.
func (x *schemaIndex) resolve(i int, ref string) (targets []int, dynamic string, err error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, "", fmt.Errorf("reference %q: %w", ref, err)
	}
	u = x.uri[x.base[i]].ResolveReference(u)
	doc := *u
	doc.Fragment, doc.RawFragment = "", ""
	resources := x.byURI[doc.String()]
	if len(resources) == 0 {
		return nil, "", fmt.Errorf("reference %q: %s is not in the schema (remote schemas are never fetched)", ref, doc.String())
	}
	frag := u.Fragment // percent-decoded
	for _, res := range resources {
		if frag != "" && !strings.HasPrefix(frag, "/") {
			for _, a := range x.anchor[res][frag] {
				targets = append(targets, a.at)
				if a.dynamic {
					dynamic = frag
				}
			}
			continue
		}
		s, perr := pointerTarget(x.all[res], frag)
		if at, ok := x.at[s]; perr == nil && ok {
			targets = append(targets, at)
		} else if perr != nil {
			err = perr
		}
	}
	if len(targets) == 0 {
		if err == nil {
			err = fmt.Errorf("no anchor %q", frag)
		}
		return nil, "", fmt.Errorf("reference %q: %w", ref, err)
	}
	return targets, dynamic, nil
}

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// pointerTarget resolves a JSON pointer ("" or "/$defs/a/properties/b",
// already percent-decoded) within s by the keywords' JSON names, as
// google/jsonschema-go does.
func pointerTarget(s *jsonschema.Schema, ptr string) (*jsonschema.Schema, error) {
	if ptr == "" {
		return s, nil
	}
	cur := reflect.ValueOf(s)
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = pointerUnescaper.Replace(tok)
		switch cur.Kind() {
		case reflect.Pointer:
			if cur.IsNil() {
				return nil, fmt.Errorf("pointer %q: no schema at %q", ptr, tok)
			}
			f, ok := fieldByJSONName(cur.Elem(), tok)
			if !ok {
				return nil, fmt.Errorf("pointer %q: no keyword %q", ptr, tok)
			}
			cur = f
		case reflect.Map:
			cur = cur.MapIndex(reflect.ValueOf(tok))
		case reflect.Slice:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= cur.Len() || (len(tok) > 1 && tok[0] == '0') {
				return nil, fmt.Errorf("pointer %q: no item %q", ptr, tok)
			}
			cur = cur.Index(n)
		default:
			return nil, fmt.Errorf("pointer %q: not a schema", ptr)
		}
		if !cur.IsValid() {
			return nil, fmt.Errorf("pointer %q: no schema at %q", ptr, tok)
		}
	}
	t, ok := cur.Interface().(*jsonschema.Schema)
	if !ok || t == nil {
		return nil, fmt.Errorf("pointer %q: not a schema", ptr)
	}
	return t, nil
}

// fieldByJSONName returns the field of the schema v that holds the keyword
// name, as google/jsonschema-go looks it up.
func fieldByJSONName(v reflect.Value, name string) (reflect.Value, bool) {
	switch name { // the keywords google keeps in fields without a JSON name
	case "items":
		if it := v.FieldByName("Items"); !it.IsNil() {
			return it, true
		}
		return v.FieldByName("ItemsArray"), true
	case "dependencies":
		return v.FieldByName("DependencySchemas"), true
	}
	if index, ok := fieldsOfSchema.byName[name]; ok {
		return v.FieldByIndex(index), true
	}
	return reflect.Value{}, false
}
