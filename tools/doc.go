// Package tools defines the tools a model can call and builds them from
// plain Go functions.
//
// A tool is a function over a struct. Its JSON Schema, which the model
// sees, is generated from the struct (json names; fields without omitempty
// are required; jsonschema tags for descriptions, enums, bounds and
// defaults), and its body receives the model's arguments decoded into the
// struct after they pass the tool's checks:
//
//	type WeatherArgs struct {
//		City string `json:"city" jsonschema:"description=City name"`
//		Days int    `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
//	}
//
//	weather, err := tools.New(tools.Config{Name: "weather", Description: "Forecast for a city"},
//		func(ctx context.Context, in WeatherArgs) (string, error) {
//			return fmt.Sprintf("%s: sunny for %d days", in.City, in.Days), nil
//		})
//
// The body returns what the model reads: a string, a [Result] (text and
// images, details for user interfaces, Terminate), or any value, which is
// sent as JSON; an error becomes an error result with its text. [CallID]
// and [ReportProgress] give the body its call's id and a way to publish
// progress; [Config] also sets a Label for user interfaces, Mode
// Sequential (a batch with such a call runs one call at a time), a
// Timeout, and a PrepareArguments shim for legacy argument shapes.
//
// Nested, recursive, map, slice, pointer and time.Time fields work. [NewJSON]
// builds a tool from a hand-written schema; its body gets the arguments as
// a map[string]any of its own (numbers are float64, except an integer
// beyond ±2^53, which stays an exact json.Number). A tool no provider
// would accept is refused when it is built: a name outside
// [a-zA-Z0-9_-]{1,64}, a schema whose root is not an object, a Go type JSON
// cannot describe.
//
// # The checks
//
// The loop checks every call's arguments before the body runs, in the
// reference's order: the PrepareArguments shim (if any), coercion of
// primitives toward the schema (numbers from numeric strings, booleans from
// "true"/"false", ...), validation, and decoding into the body's type.
// [Tool.Check] runs them; the loop calls it, and so can a test. Arguments
// that do not fit are a [*ValidationError] whose text is exactly what the
// reference shows the model:
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
// Schemas are compiled once, when the tool is built, into a checker that
// coerces, decides and lists every violation by instance path. Its verdict
// is google/jsonschema-go's: tests compare them on every case of the
// official JSON Schema test suite (draft 2020-12) and on fuzzed arguments.
// A schema that uses a keyword the checker does not implement (dynamic
// references, unevaluatedProperties/Items, dependentSchemas, ...) is judged
// by google/jsonschema-go on every call instead.
//
// # Bounds
//
// A schema may come from a server nobody vetted, so no schema and no
// arguments may make a check run without end. When a tool is built, every
// reference is resolved, in every form JSON Schema names a schema (JSON
// pointers with their escapes, $id, $anchor, $dynamicRef, draft-07
// definitions; remote schemas are never fetched), and the schema is
// refused if validation could loop without descending into the value, or
// go past the check's bounds whatever the value: [MaxSchemaDepth] (10,000)
// levels of schema text, [MaxCheckDepth] (1,000) schemas applied one
// within another, [MaxCheckSteps] (1,000,000) schemas applied in all.
// Arguments nested more than [MaxArgumentDepth] (100) levels deep are
// refused with a [ValidationError]; arguments that would take the check
// past its bounds (a recursive schema with long chains of references at
// every level, say) fail with [CheckLimitText], before anything is
// checked.
package tools
