package bandit

import (
	"fmt"
	"strings"

	"github.com/amt-dev/amt/internal/markdown"
)

// AgentsMarkdown renders the agent table as Markdown: one row per agent
// (name, doc line, its options with their defaults for that agent), then
// one row per option (key, meaning, the values it takes). The README and
// the configuration reference (CONFIG.md) both show it, so they cannot
// disagree with each other or with the table.
func AgentsMarkdown() string {
	var b strings.Builder
	b.WriteString("| agent | what it is | options (default) |\n|---|---|---|\n")
	for i := range agents {
		a := &agents[i]
		cfg, err := Defaults(a.Name)
		if err != nil {
			panic(err) // the table's own names: a broken table is a programming error
		}
		var opts []string
		for _, k := range Keys(a.Name) {
			opts = append(opts, fmt.Sprintf("`%s` (%s)", k, markdown.Cell(a.option(k).get(cfg))))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", a.Name, markdown.Cell(a.Doc), strings.Join(opts, ", "))
	}
	b.WriteString("\n| option | what it is | value |\n|---|---|---|\n")
	for _, o := range allOptions {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", o.Key, markdown.Cell(o.Doc), markdown.Cell(o.Want))
	}
	return b.String()
}
