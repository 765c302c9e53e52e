package tools

import "math"

// coerce converts v toward the schema n, following the reference's rules
// for plain JSON Schemas: allOf coerces through each member; anyOf and
// oneOf take the first member whose coercion of a copy validates; a type
// (or type list) converts primitives; objects and arrays are walked. Unlike
// the reference, $ref is followed. v must be a normalized clone: maps and
// slices are changed in place.
func coerce(v any, n *node) any {
	if n == nil {
		return v
	}
	if n.ref != nil {
		v = coerce(v, n.ref)
	}
	for _, m := range n.allOf {
		v = coerce(v, m)
	}
	if len(n.anyOf) > 0 {
		v = coerceUnion(v, n.anyOf)
	}
	if len(n.oneOf) > 0 {
		v = coerceUnion(v, n.oneOf)
	}
	if len(n.types) > 0 && !(len(n.types) > 1 && matchesAny(v, n.types)) {
		for _, t := range n.types {
			if c, changed := coercePrimitive(v, t); changed {
				v = c
				break
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if hasTypeName(n.types, "object") {
			coerceObject(x, n)
		}
	case []any:
		if hasTypeName(n.types, "array") {
			coerceArray(x, n)
		}
	}
	return v
}

func coerceUnion(v any, members []*node) any {
	for _, m := range members {
		c := coerce(Clone(v), m)
		if m.valid(c) {
			return c
		}
	}
	return v
}

func coerceObject(obj map[string]any, n *node) {
	for k, p := range n.props {
		if e, ok := obj[k]; ok {
			obj[k] = coerce(e, p)
		}
	}
	if n.addl != nil {
		for k, e := range obj {
			if _, declared := n.props[k]; !declared {
				obj[k] = coerce(e, n.addl)
			}
		}
	}
}

func coerceArray(arr []any, n *node) {
	if len(n.prefix) > 0 {
		for i := range min(len(arr), len(n.prefix)) {
			arr[i] = coerce(arr[i], n.prefix[i])
		}
		return
	}
	if n.items != nil {
		for i := range arr {
			arr[i] = coerce(arr[i], n.items)
		}
	}
}

// coercePrimitive converts v to the primitive type t when the reference's
// rules allow it, and reports whether it changed v.
func coercePrimitive(v any, t string) (any, bool) {
	switch t {
	case "number", "integer":
		switch x := v.(type) {
		case nil:
			return 0.0, true
		case bool:
			if x {
				return 1.0, true
			}
			return 0.0, true
		case string:
			f, ok := jsNumber(x)
			if !ok || math.IsInf(f, 0) || (t == "integer" && f != math.Trunc(f)) {
				return v, false
			}
			return f, true
		}
	case "boolean":
		switch x := v.(type) {
		case nil:
			return false, true
		case string:
			switch x {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		case float64:
			switch x {
			case 1:
				return true, true
			case 0:
				return false, true
			}
		}
	case "string":
		switch x := v.(type) {
		case nil:
			return "", true
		case float64:
			return jsString(x), true
		case bool:
			if x {
				return "true", true
			}
			return "false", true
		}
	case "null":
		switch x := v.(type) {
		case string:
			if x == "" {
				return nil, true
			}
		case float64:
			if x == 0 {
				return nil, true
			}
		case bool:
			if !x {
				return nil, true
			}
		}
	}
	return v, false
}

func matchesAny(v any, types []string) bool {
	for _, t := range types {
		if hasType(v, t) {
			return true
		}
	}
	return false
}

func hasTypeName(types []string, t string) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}
