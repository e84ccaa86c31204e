package plots

import (
	"bytes"

	"github.com/amt-dev/amt/experiments/record"
)

// config quotes the configuration the results were made with: the
// folder's config.yaml, the snapshot amt sweep and amt run save (not the
// configuration file as it may read now).
func (b *builder) config() error {
	b.p("## Configuration\n\n")
	if b.e.Config == nil {
		b.p("No configuration snapshot (`%s`) was found in this folder.\n\n", record.ConfigFile)
		return nil
	}
	fence := "```"
	for bytes.Contains(b.e.Config, []byte(fence)) {
		fence += "`"
	}
	b.p("The configuration these results were made with (`%s`, the snapshot saved by amt sweep and amt run", record.ConfigFile)
	if m := b.e.Meta; m != nil {
		b.p("; sha256 `%s`, as `%s` records", m.ConfigSHA256, record.MetaFile)
	}
	b.p("):\n\n%syaml\n%s", fence, b.e.Config)
	if !bytes.HasSuffix(b.e.Config, []byte("\n")) {
		b.p("\n")
	}
	b.p("%s\n", fence)
	return nil
}
