package tools

import "reflect"

// Most tools take a flat object: "type": "object", declared properties
// and a required list, with nothing else at the object itself. For such a
// tool built with [New], [Tool.Check] checks, coerces and decodes each
// declared property in one pass, without building the coerced argument
// map that the general path (prepare) returns. Anything out of the ordinary
// (a property the schema does not declare, a value to normalize, a
// violation) sends the call down the general path, which decides it and
// says why.

// flatPlan decodes the values of a flat object's declared properties into
// a new *T: fields[i] is the struct field of the node's i-th key.
type flatPlan struct {
	dec    *decoder
	fields []fieldPlan
	newT   func() (any, reflect.Value) // a new *T, and the T it points to
}

// isFlat reports whether n, the root of a tool's schema, is a flat object.
func isFlat(n *node) bool {
	s := n.s
	return n.typeSet == setObject && n.ref == nil && len(n.allOf)+len(n.anyOf)+len(n.oneOf) == 0 &&
		n.not == nil && n.cond == nil && n.enum == nil && n.konst == nil && len(n.patterns) == 0 &&
		n.names == nil && len(s.DependentRequired) == 0 && s.MinProperties == nil && s.MaxProperties == nil &&
		len(n.keys) <= inlineProps
}

// flatPlanFor returns the plan for a struct type T with a field of the
// exact name of every property n declares, or nil.
func flatPlanFor[T any](d *decoder, n *node) *flatPlan {
	p := d.root
	if p.slow || p.t.Kind() != reflect.Struct || !isFlat(n) {
		return nil
	}
	fp := &flatPlan{dec: d, fields: make([]fieldPlan, len(n.keys)), newT: func() (any, reflect.Value) {
		in := new(T)
		return in, reflect.ValueOf(in).Elem()
	}}
	for i, k := range n.keys {
		f, ok := p.fields[k]
		if !ok {
			return nil
		}
		fp.fields[i] = f
	}
	return fp
}

// prepareBound is prepare followed by bind: the value the body receives,
// or the error that refuses the call, in one pass when the tool allows it
// (a struct body, a flat schema the compiled checker decides, no
// PrepareArguments shim).
func (t *Tool) prepareBound(raw map[string]any) (any, error) {
	if bound, ok := t.oneBind(raw); ok {
		return bound, nil
	}
	args, err := t.prepare(raw)
	if err != nil {
		return nil, err
	}
	return t.bind(args)
}

// oneBind is the one-pass path when the tool allows it.
func (t *Tool) oneBind(raw map[string]any) (any, bool) {
	if t.flat == nil || t.cfg.PrepareArguments != nil || !t.decides || t.steps != nil {
		return nil, false
	}
	return t.bindFlat(raw)
}

// bindFlat is the one-pass path; it reports false whenever the general
// path must decide.
func (t *Tool) bindFlat(raw map[string]any) (any, bool) {
	n := t.root
	var vals [inlineProps]any
	var has [inlineProps]bool
	found := 0
	for i, k := range n.keys {
		v, ok := raw[k]
		if !ok {
			continue
		}
		if !isNormal(v, t.argDepth-1) {
			return nil, false
		}
		if c, changed := coerce(v, n.propList[i]); changed {
			v = c
		}
		if !n.propList[i].valid(v) {
			return nil, false
		}
		vals[i], has[i] = v, true
		found++
	}
	if found != len(raw) { // undeclared properties
		return nil, false
	}
	for _, at := range n.reqAt {
		if at < 0 || !has[at] {
			return nil, false
		}
	}
	in, rv := t.flat.newT()
	for i, f := range t.flat.fields {
		if has[i] && t.flat.dec.decodeValue(rv.Field(f.index), vals[i], f.plan) != nil {
			return nil, false
		}
	}
	return in, true
}
