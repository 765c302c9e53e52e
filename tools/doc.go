// Package tools defines the tools a model can call, builds them from plain
// Go functions over struct types, and prepares a call's arguments the way
// the reference loop does: deep-copy, apply the tool's PrepareArguments
// shim, coerce primitives toward the schema, then validate.
//
// A tool built with [New] is typed end to end: its JSON Schema is generated
// from the argument struct (json names; fields without omitempty are
// required; jsonschema tags for descriptions, enums, bounds and defaults),
// and its body receives the struct decoded from the validated, coerced
// arguments.
//
// Validation failures are [*ValidationError] values whose text is exactly
// what the reference shows the model:
//
//	Validation failed for tool "count":
//	  - path: must have required properties path
//	  - count: must be integer
//
//	Received arguments:
//	{
//	  "count": "abc"
//	}
//
// Schemas are resolved once, when the tool is built, into a compiled
// checker that coerces, decides and lists every violation by instance path.
// Its verdict is google/jsonschema-go's: tests run it against google's on
// every case of the official JSON Schema test suite (draft 2020-12) it
// decides and on fuzzed arguments. A schema that uses a keyword the
// checker does not implement (dynamic references, anchors, nested $id,
// unevaluatedProperties/Items, dependentSchemas) is judged by
// google/jsonschema-go on every call instead.
package tools
