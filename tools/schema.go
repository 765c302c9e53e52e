package tools

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentloop/agentloop/internal/schema"
)

// SchemaFor generates the JSON Schema of T's JSON encoding with
// invopop/jsonschema, shaped the way LLM providers accept it: the root is an
// object schema with its properties at the top level (not a $ref), $defs
// holds only nested or recursive types, and $schema and $id are left out.
//
// Fields use their json names; a field without omitempty is required;
// `jsonschema:"description=...,enum=a,enum=b,minimum=0,default=..."` tags
// add constraints (see invopop/jsonschema). Additional properties are
// allowed, as in the reference: a model's extra keys are ignored rather
// than refused.
func SchemaFor[T any]() (*jsonschema.Schema, error) {
	return schema.FromType(reflect.TypeFor[T]())
}
