package schema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// decoder moves validated JSON values (maps, slices, float64, string, bool,
// nil) into Go values of one type without a round trip through JSON text.
// It follows encoding/json's rules for the types it handles (json tags,
// exact then case-insensitive key match, unknown keys ignored) and hands
// every other type (custom unmarshalers, embedded structs, ",string"
// fields) to encoding/json.
type decoder struct {
	root *plan
}

// plan is how to decode into one Go type; plans are built once per tool,
// with the plans of nested types linked in.
type plan struct {
	t      reflect.Type
	slow   bool // decode through encoding/json
	elem   *plan
	fields map[string]fieldPlan
	list   []fieldPlan // fields, in declaration order
}

type fieldPlan struct {
	index int
	name  string
	plan  *plan
}

// Decoder moves checked arguments into a new T by encoding/json's rules
// (field names and types), without a round trip through JSON text.
type Decoder[T any] struct {
	d    *decoder
	s    *Schema   // for Bind, with flat
	flat *flatPlan // nil when T or the schema is not flat
}

// NewDecoder returns the decoder for T. Given the schema T's values are
// checked against (or nil), it also binds flat arguments in one pass (see
// [Decoder.Bind]).
func NewDecoder[T any](s *Schema) *Decoder[T] {
	d := newDecoder(reflect.TypeFor[T]())
	out := &Decoder[T]{d: d}
	if s != nil {
		out.s, out.flat = s, flatPlanFor(d, s.root)
	}
	return out
}

// Decode moves checked arguments into a new T; a *T (from Bind) passes
// through. A value T cannot hold is an [*Invalid] with one violation at
// its path.
func (d *Decoder[T]) Decode(args any) (*T, error) {
	if v, ok := args.(*T); ok {
		return v, nil
	}
	in := new(T)
	if err := d.d.decodeValue(reflect.ValueOf(in).Elem(), args, d.d.root); err != nil {
		var be *bindError
		if !errors.As(err, &be) {
			be = &bindError{msg: err.Error()}
		}
		return nil, &Invalid{Violations: []Violation{be.violation()}}
	}
	return in, nil
}

func newDecoder(t reflect.Type) *decoder {
	return &decoder{root: buildPlan(t, map[reflect.Type]*plan{})}
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func buildPlan(t reflect.Type, seen map[reflect.Type]*plan) *plan {
	if p, ok := seen[t]; ok {
		return p
	}
	p := &plan{t: t}
	seen[t] = p
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		p.slow = true
		return p
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		p.elem = buildPlan(t.Elem(), seen)
	case reflect.Struct:
		p.fields = map[string]fieldPlan{}
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if f.Anonymous || strings.Contains(tag, ",string") {
				p.slow = true
				return p
			}
			if !f.IsExported() || tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" {
				name = f.Name
			}
			fp := fieldPlan{index: i, name: name, plan: buildPlan(f.Type, seen)}
			p.fields[name] = fp
			p.list = append(p.list, fp)
		}
	}
	return p
}

// decodeValue stores v into the settable rv, whose type p describes.
func (d *decoder) decodeValue(rv reflect.Value, v any, p *plan) error {
	t := p.t
	if p.slow {
		return viaJSON(rv, v)
	}
	if v == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			rv.SetZero()
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return viaJSON(rv, v)
		}
		rv.Set(reflect.ValueOf(clone(v))) // the body's own copy
		return nil
	case reflect.Pointer:
		if rv.IsNil() {
			rv.Set(reflect.New(t.Elem()))
		}
		return d.decodeValue(rv.Elem(), v, p.elem)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return typeError(v, t)
		}
		rv.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return typeError(v, t)
		}
		rv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := toInt(v)
		if !ok || rv.OverflowInt(i) {
			return typeError(v, t)
		}
		rv.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u, ok := toUint(v)
		if !ok || rv.OverflowUint(u) {
			return typeError(v, t)
		}
		rv.SetUint(u)
	case reflect.Float32, reflect.Float64:
		var text string
		switch x := v.(type) {
		case float64:
			if t.Bits() == 64 {
				rv.SetFloat(x)
				return nil
			}
			// To float32 as encoding/json rounds the number's text (the
			// shortest text of the float64).
			text = strconv.FormatFloat(x, 'g', -1, 64)
		case json.Number:
			text = string(x)
		default:
			return typeError(v, t)
		}
		f, err := strconv.ParseFloat(text, t.Bits())
		if err != nil || rv.OverflowFloat(f) {
			return typeError(v, t)
		}
		rv.SetFloat(f)
	case reflect.Slice:
		return d.decodeSlice(rv, v, p)
	case reflect.Map:
		return d.decodeMap(rv, v, p)
	case reflect.Struct:
		return d.decodeStruct(rv, v, p)
	default:
		return viaJSON(rv, v)
	}
	return nil
}

func (d *decoder) decodeSlice(rv reflect.Value, v any, p *plan) error {
	a, ok := v.([]any)
	if !ok {
		return typeError(v, p.t)
	}
	s := reflect.MakeSlice(p.t, len(a), len(a))
	for i, e := range a {
		if err := d.decodeValue(s.Index(i), e, p.elem); err != nil {
			return at(strconv.Itoa(i), err)
		}
	}
	rv.Set(s)
	return nil
}

func (d *decoder) decodeMap(rv reflect.Value, v any, p *plan) error {
	m, ok := v.(map[string]any)
	if !ok || p.t.Key().Kind() != reflect.String {
		return viaJSON(rv, v)
	}
	out := reflect.MakeMapWithSize(p.t, len(m))
	for k, e := range m {
		ev := reflect.New(p.t.Elem()).Elem()
		if err := d.decodeValue(ev, e, p.elem); err != nil {
			return err
		}
		out.SetMapIndex(reflect.ValueOf(k).Convert(p.t.Key()), ev)
	}
	rv.Set(out)
	return nil
}

func (d *decoder) decodeStruct(rv reflect.Value, v any, p *plan) error {
	m, ok := v.(map[string]any)
	if !ok {
		return typeError(v, p.t)
	}
	exact := 0
	for _, f := range p.list {
		if e, ok := m[f.name]; ok {
			exact++
			if err := d.decodeValue(rv.Field(f.index), e, f.plan); err != nil {
				return at(f.name, err)
			}
		}
	}
	if exact == len(m) {
		return nil
	}
	// Other keys match a field case-insensitively, as in encoding/json,
	// unless the field's exact name is present too; unknown keys are
	// ignored.
	for k, e := range m {
		if _, ok := p.fields[k]; ok {
			continue
		}
		f, ok := p.fold(k)
		if !ok {
			continue
		}
		if _, ok := m[f.name]; ok {
			continue
		}
		if err := d.decodeValue(rv.Field(f.index), e, f.plan); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// fold finds a field by case-insensitive name, as encoding/json does.
func (p *plan) fold(k string) (fieldPlan, bool) {
	for name, f := range p.fields {
		if strings.EqualFold(name, k) {
			return f, true
		}
	}
	return fieldPlan{}, false
}

// bindError is a value the body's type cannot hold, at a path of the
// arguments; the tool reports it as a validation failure.
type bindError struct {
	path []string // outermost first; empty for the arguments as a whole
	msg  string
}

func (e *bindError) Error() string {
	if len(e.path) == 0 {
		return "root: " + e.msg
	}
	return strings.Join(e.path, ".") + ": " + e.msg
}

// violation returns the error as a violation.
func (e *bindError) violation() Violation {
	path := "root"
	if len(e.path) > 0 {
		path = strings.Join(e.path, ".")
	}
	return Violation{Path: path, Message: e.msg}
}

// at puts err under one more step of the path.
func at(step string, err error) error {
	var be *bindError
	if errors.As(err, &be) {
		be.path = append([]string{step}, be.path...)
		return be
	}
	return &bindError{path: []string{step}, msg: err.Error()}
}

func typeError(v any, t reflect.Type) error {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if typeOf(v)&setInteger != 0 {
			lo, hi := int64(-1)<<(t.Bits()-1), int64(1)<<(t.Bits()-1)-1
			return &bindError{msg: fmt.Sprintf("must be an integer from %d to %d", lo, hi)}
		}
		return &bindError{msg: "must be integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if typeOf(v)&setInteger != 0 {
			return &bindError{msg: fmt.Sprintf("must be an integer from 0 to %d", uint64(1)<<(t.Bits()-1)*2-1)}
		}
		return &bindError{msg: "must be integer"}
	}
	return &bindError{msg: fmt.Sprintf("cannot be held by the tool's %v (it is %s)", t, jsType(v))}
}

func viaJSON(rv reflect.Value, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, rv.Addr().Interface())
}

// toInt converts a normalized number to an int64 exactly, or reports
// false: a fraction, or a value past int64's range. float64 holds every
// power of two, so the bounds are exact; a float64 at or past 2^63 has no
// int64 (converting it is undefined).
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
			return 0, false
		}
		return int64(x), true
	case json.Number: // an integer beyond ±2^53, as its digits
		i, err := strconv.ParseInt(string(x), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// toUint is toInt for uint64.
func toUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case float64:
		if x < 0 || x != math.Trunc(x) || x >= 1<<64 {
			return 0, false
		}
		return uint64(x), true
	case json.Number:
		u, err := strconv.ParseUint(string(x), 10, 64)
		return u, err == nil
	}
	return 0, false
}
