package experiments

import (
	"fmt"
	"strings"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/internal/markdown"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// ConfigReference returns the configuration reference in Markdown: every
// key of the schema with its value, default, case study and meaning, every
// agent of package bandit's table with its options and defaults, and the
// built-in scenarios, relations and rewards an action set may use. It is
// generated from the tables themselves, so it cannot drift from what the
// parser accepts; experiments/configs/CONFIG.md is a copy (amt config -ref).
func ConfigReference() string {
	var b strings.Builder
	b.WriteString(`# Experiment configuration reference

<!-- Generated from the schema in experiments/schema.go and package bandit's agent table by
     "amt config -ref"; do not edit. "go test ./experiments -run TestConfigReference -update"
     rewrites this file. -->

An experiment is one YAML document with the keys below (` + "`amt run -config FILE`" + `). It is read
strictly: an unknown key (with a suggestion), a missing required key, a value of the wrong type or
out of range, an unknown agent, option or relation, or a missing file fails at once with
` + "`file:line:column: key: problem`" + `, before any long work. Relative paths are looked up beside the
config file, then in the assets folder (` + "`-assets DIR`, `$AMT_ASSETS`" + `, else ` + "`../shared/assets`" + ` found by
walking up from the working directory). The configurations in experiments/ are examples of every
part.

## Keys

"[]" marks the items of a list. A key of one case study only is refused in the other's
configurations.

| key | value | default | applies to | meaning |
|---|---|---|---|---|
`)
	for _, k := range schema {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.path, markdown.Cell(k.val.want), markdown.Cell(keyDefault(k)), markdown.Cell(keyApplies(k)), markdown.Cell(k.doc))
	}

	b.WriteString(`
## Agents

Each item of ` + "`agents`" + ` is an agent's name, the name with options, or a mapping of name, id and
options; unknown options and values out of range are refused with the agent's options:

` + "```yaml" + `
agents:
  - random                # the defaults
  - cover: {hidden: 0}    # options; the results folder is named after the agent
  - name: cover           # two agents of one kind need distinct ids
    id: cover-h64
    options: {hidden: 64}
` + "```" + `

The agents are package bandit's agent table (` + "`amt replay -agent NAME -agent-opts k=v,…`" + ` takes the
same names and options):

`)
	b.WriteString(bandit.AgentsMarkdown())
	b.WriteString("\n")

	b.WriteString("## Action sets\n\n`action_set` names a built-in scenario:\n\n| scenario | what it is |\n|---|---|\n")
	for _, name := range mr.BuiltinNames() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, markdown.Cell(mr.BuiltinDoc(name)))
	}
	b.WriteString(`
or defines one (` + "`amt mrs`" + ` lists the same relations):

` + "```yaml" + `
action_set:
  name: light-and-turns
  reward: unit
  arms:
    - mr: invert
    - mr: brightness        # a grid: a parameter bandit chooses the value
      params: -100:100:20
    - mr: rotation
      params: [-30, 30]
    - mr: shear             # one value: a flat arm named shear:20
      params: [20]
` + "```" + `

| relation (` + "`mr`" + `) | parameter (` + "`params`" + `) | what it does |
|---|---|---|
`)
	for _, in := range mr.Relations() {
		param := "none"
		if in.Parametric() {
			param = fmt.Sprintf("%s in %s, from %g to %g", in.Param.Name, in.Param.Unit, in.Param.Min, in.Param.Max)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", in.Name, markdown.Cell(param), markdown.Cell(in.Summary))
	}
	b.WriteString("\n| reward | what a violation earns |\n|---|---|\n")
	for _, o := range scenario.Objectives() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", o.Name, markdown.Cell(o.Doc))
	}
	return b.String()
}

// keyDefault is a key's default as the reference shows it.
func keyDefault(k key) string {
	switch {
	case k.required && k.only != nil:
		return "required when " + k.onlyDoc
	case k.required:
		return "required"
	case k.defDoc != "":
		return k.defDoc
	case k.def != "":
		return "`" + k.def + "`"
	}
	return "none"
}

// keyApplies is where a key applies, as the reference shows it.
func keyApplies(k key) string {
	s := "all"
	if k.study != "" {
		s = k.study
	}
	if k.only != nil {
		s += ", when " + k.onlyDoc
	}
	return s
}
