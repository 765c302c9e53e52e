// Package kit is for writing a [providers.Provider]: what a provider's
// Stream needs and a user of one never does.
//
//   - [Builder] assembles the streamed message and makes its events, each
//     able to give the message as it stood (StreamEvent.Partial) at O(1)
//     cost per event.
//   - [Target] and its Prepare make a transcript one the target server
//     accepts, whichever provider it began with: orphaned calls answered,
//     ids and names it refuses replaced, another model's opaque data
//     dropped.
//   - [ResolveModel] refuses, before any request, a Model no server could
//     serve (no ID, another API) and fills in the API and provider names.
//   - [HTTPDefaults] resolves the zero values of providers.HTTPOptions.
//
// A provider's Stream, in outline:
//
//	func (p *P) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
//		m, err := kit.ResolveModel(req.Model, API, "example")
//		if err != nil {
//			return nil, fmt.Errorf("example: %w", err)
//		}
//		msgs := kit.TargetOf(m).Prepare(req.Messages) // what to send
//		return func(yield func(providers.StreamEvent) bool) {
//			b := kit.NewBuilder(m)
//			if !yield(b.Start()) {
//				return
//			}
//			// ... send msgs, then for each piece of the answer:
//			//	yield(b.TextDelta(piece))
//			yield(b.Done(providers.StopReasonStop, providers.Usage{}))
//		}, nil
//	}
//
// The stream ends with exactly one done or error event (Builder.Done,
// Builder.Fail); a cancelled ctx ends it with stop reason aborted and
// providers.AbortedMessage. examples/custom-provider is a whole one.
package kit
