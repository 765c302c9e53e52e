package tools

import (
	"context"

	"github.com/agentloop/agentloop/internal/toolctx"
)

// CallID returns the id of the tool call a body runs for, or "" when ctx
// carries no call (the loop gives every body's context its call).
func CallID(ctx context.Context) string { return toolctx.ID[Result](ctx) }

// ReportProgress publishes a partial result of the running body: the loop
// sends it as a tool_execution_update event (the model does not see it).
// Reports made after the body returned, or with a ctx that carries no
// call, are ignored.
func ReportProgress(ctx context.Context, partial Result) { toolctx.Report(ctx, partial) }
