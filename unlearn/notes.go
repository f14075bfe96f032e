package unlearn

import (
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/schema"
)

// runNotes are a run's notes as values until they are worded: metrics.json
// in Job.Terms (the command's flags), the HTML report in setting.Words.
type runNotes struct {
	notes []setting.Note // unlearning.notes, the warnings of flags among them
	log   []setting.Note // the algorithm's (unlearning.log.notes)
	flags []flagNote     // unlearning.flags
}

// flagNote is a warning with its schema.Flag kind.
type flagNote struct {
	kind string
	note setting.Note
}

// add appends a note formatted by setting.Notef.
func (n *runNotes) add(kind setting.Kind, format string, a ...any) {
	n.notes = append(n.notes, setting.Notef(kind, format, a...))
}

// fill words every note into u in t's terms.
func (n *runNotes) fill(u *schema.Unlearning, t setting.Terms) {
	u.Notes = render(n.notes, t)
	if u.Log != nil {
		u.Log.Notes = render(n.log, t)
	}
	u.Flags = nil
	for _, f := range n.flags {
		u.Flags = append(u.Flags, schema.Flag{Kind: f.kind, Text: f.note.Render(t)})
	}
}

// page is rep with the notes worded for the HTML report's reader.
func (n *runNotes) page(rep *schema.Report) *schema.Report {
	page, u := *rep, *rep.Unlearning
	if u.Log != nil {
		l := *u.Log
		u.Log = &l
	}
	n.fill(&u, setting.Words)
	page.Unlearning = &u
	return &page
}

// render words notes in t's terms; nil stays nil (metrics.json's null).
func render(notes []setting.Note, t setting.Terms) []string {
	if notes == nil {
		return nil
	}
	out := make([]string, 0, len(notes))
	for _, n := range notes {
		out = append(out, n.Render(t))
	}
	return out
}
