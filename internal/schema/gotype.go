package schema

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// checkGoType refuses a Go type whose JSON the model could not fill: a
// field of a kind JSON cannot hold (chan, func, complex, unsafe.Pointer,
// an interface with methods, a map whose keys are not strings, integers
// or text), and a struct with unexported fields only, which would become
// an object without properties and silently drop whatever the model sent.
// An empty struct is fine: a tool without arguments. Errors name the
// field by its path of Go names from the type's name ("Args.Callback").
func checkGoType(t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct { // a root that is no object is refused later
		return nil
	}
	root := t.Name()
	if root == "" {
		root = "arguments"
	}
	_, err := walkGoType(t, root, map[reflect.Type]bool{})
	return err
}

// customJSON reports whether t decodes itself (time.Time, big.Int, ...).
func customJSON(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[json.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// walkGoType checks t, the type of the field at path, and returns how
// many JSON-visible fields it has when it is a struct (embedded structs'
// fields count, as encoding/json promotes them).
func walkGoType(t reflect.Type, path string, seen map[reflect.Type]bool) (int, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if customJSON(t) {
		return 1, nil
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return 0, unholdable(path, t)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return 0, unholdable(path, t)
		}
	case reflect.Slice, reflect.Array:
		return 0, walkElem(t, path, seen)
	case reflect.Map:
		switch k := t.Key(); k.Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !reflect.PointerTo(k).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
				return 0, unholdable(path, t)
			}
		}
		return 0, walkElem(t, path, seen)
	case reflect.Struct:
		return walkStruct(t, path, seen)
	}
	return 0, nil
}

// walkElem checks the elements of a slice, array or map; an error names
// the field that holds them.
func walkElem(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	_, err := walkGoType(t.Elem(), path, seen)
	if u, ok := err.(*unholdableError); ok && u.path == path {
		return unholdable(path, t) // name the field's own type
	}
	return err
}

func walkStruct(t reflect.Type, path string, seen map[reflect.Type]bool) (int, error) {
	if seen[t] {
		return 1, nil // checked already (a recursive type)
	}
	seen[t] = true
	visible, hidden := 0, 0
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		named := tag != "" && tag[0] != ','
		if f.Anonymous && ft.Kind() == reflect.Struct && !named && !customJSON(ft) {
			n, err := walkGoType(f.Type, path, seen) // promoted fields
			if err != nil {
				return 0, err
			}
			visible += n
			continue
		}
		if !f.IsExported() && !(f.Anonymous && ft.Kind() == reflect.Struct) {
			hidden++
			continue
		}
		visible++
		if _, err := walkGoType(f.Type, path+"."+f.Name, seen); err != nil {
			return 0, err
		}
	}
	switch {
	case visible > 0 || hidden == 0:
	case !strings.Contains(path, "."):
		return 0, fmt.Errorf("%s has no exported fields, so JSON would drop whatever the model sends: export the fields the model should fill, or use struct{} for a tool without arguments", path)
	default:
		return 0, fmt.Errorf("field %s: its type %v has no exported fields, so JSON would drop whatever the model sends in it: export the fields the model should fill, or tag the field `json:\"-\"` to leave it out of the tool's arguments", path, t)
	}
	return visible, nil
}

// unholdableError is a field of a type JSON cannot hold.
type unholdableError struct {
	path string
	t    reflect.Type
}

func unholdable(path string, t reflect.Type) error { return &unholdableError{path: path, t: t} }

func (e *unholdableError) Error() string {
	return fmt.Sprintf("field %s: JSON cannot hold its type %v; tag the field `json:\"-\"` to leave it out of the tool's arguments", e.path, e.t)
}
