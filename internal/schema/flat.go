package schema

import "reflect"

// Most tools take a flat object: "type": "object", declared properties
// and a required list, with nothing else at the object itself. For such a
// struct body, [Decoder.Bind] checks, coerces and decodes each
// declared property in one pass, without building the coerced argument
// map that the general path ([Schema.Check]) returns. Anything out of the ordinary
// (a property the schema does not declare, a value to normalize, a
// violation) sends the call down the general path, which decides it and
// says why.

// flatPlan decodes the values of a flat object's declared properties into
// a struct: fields[i] is the struct field of the node's i-th key.
type flatPlan struct {
	fields []fieldPlan
}

// isFlat reports whether n, the root of a tool's schema, is a flat object.
func isFlat(n *node) bool {
	s := n.s
	return n.typeSet == setObject && n.ref == nil && len(n.allOf)+len(n.anyOf)+len(n.oneOf) == 0 &&
		n.not == nil && n.cond == nil && n.enum == nil && n.konst == nil && len(n.patterns) == 0 &&
		n.names == nil && len(s.DependentRequired) == 0 && s.MinProperties == nil && s.MaxProperties == nil &&
		len(n.keys) <= inlineProps
}

// flatPlanFor returns the plan for a struct type with a field of the exact
// name of every property n declares, or nil.
func flatPlanFor(d *decoder, n *node) *flatPlan {
	p := d.root
	if p.slow || p.t.Kind() != reflect.Struct || !isFlat(n) {
		return nil
	}
	fp := &flatPlan{fields: make([]fieldPlan, len(n.keys))}
	for i, k := range n.keys {
		f, ok := p.fields[k]
		if !ok {
			return nil
		}
		fp.fields[i] = f
	}
	return fp
}

// Bind checks, coerces and decodes raw in one pass when the schema is a
// flat object the compiled checker decides, with no steps to count, and T
// a struct with a field for every declared property. It reports false
// whenever [Schema.Check] and [Decoder.Decode] must decide (a property the
// schema does not declare, a value to normalize, a violation); given the
// same raw; when it binds, they reach the same value (FuzzPrepareBound).
func (d *Decoder[T]) Bind(raw map[string]any) (*T, bool) {
	if d.flat == nil || !d.s.decides || d.s.steps != nil {
		return nil, false
	}
	return d.bindFlat(raw)
}

// bindFlat is Bind once the schema and T allow it.
func (d *Decoder[T]) bindFlat(raw map[string]any) (*T, bool) {
	n := d.s.root
	var vals [inlineProps]any
	var has [inlineProps]bool
	found := 0
	for i, k := range n.keys {
		v, ok := raw[k]
		if !ok {
			continue
		}
		if !isNormal(v, d.s.argDepth-1) {
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
	in := new(T)
	rv := reflect.ValueOf(in).Elem()
	for i, f := range d.flat.fields {
		if has[i] && d.d.decodeValue(rv.Field(f.index), vals[i], f.plan) != nil {
			return nil, false
		}
	}
	return in, true
}
