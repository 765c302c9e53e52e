package providers

// Usage counts the tokens of one model call and what they cost.
type Usage struct {
	Input       int  `json:"input"`
	Output      int  `json:"output"`
	CacheRead   int  `json:"cacheRead"`
	CacheWrite  int  `json:"cacheWrite"`
	TotalTokens int  `json:"totalTokens"`
	Cost        Cost `json:"cost"`
	// Reasoning is how many of the Output tokens were reasoning, when the
	// provider says.
	Reasoning int `json:"reasoning,omitempty"`
}

// Cost is the price of a Usage in dollars, by kind of token.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Prices are a model's prices in dollars per million tokens.
type Prices struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Model describes an LLM as the loop and a provider need to know it. Make
// one with the Model method of the provider that serves it
// (p.Model("gpt-4o")), which sets API (the wire) and Provider (the vendor)
// to the provider's own; set the rest (prices, context window) on the
// value. A provider's Stream refuses, before any request, a Model without
// an ID and one whose API is another's; an empty API or Provider is taken
// to be the provider's.
type Model struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	API      string `json:"api"`
	Provider string `json:"provider"`
	BaseURL  string `json:"baseUrl"`
	// Reasoning reports whether the model supports a reasoning budget.
	Reasoning     bool   `json:"reasoning"`
	ContextWindow int    `json:"contextWindow"`
	MaxTokens     int    `json:"maxTokens"`
	Prices        Prices `json:"cost"`
}

// Priced returns u with its Cost computed from the model's prices and its
// TotalTokens filled in when the provider left it zero.
func (m Model) Priced(u Usage) Usage {
	if u.TotalTokens == 0 {
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	const perMillion = 1e6
	u.Cost = Cost{
		Input:      float64(u.Input) * m.Prices.Input / perMillion,
		Output:     float64(u.Output) * m.Prices.Output / perMillion,
		CacheRead:  float64(u.CacheRead) * m.Prices.CacheRead / perMillion,
		CacheWrite: float64(u.CacheWrite) * m.Prices.CacheWrite / perMillion,
	}
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
	return u
}
