package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/thread"
)

const orgUsage = `usage: weft org set ORG [--model PROVIDER/MODEL] [--fast-model PROVIDER/MODEL] [--persona-file FILE]
       weft org unset ORG [--model] [--fast-model] [--persona]
       weft org show ORG
       weft org list

An organisation (weft tenant link; a tenant never linked is one of its own,
KIND:ID) may have its own model, fast model (the one that ranks relevant
threads) and persona; whatever it does not set is the global one
(WEFT_MODEL, WEFT_FAST_MODEL, WEFT_PERSONA). A model is PROVIDER/MODEL,
such as anthropic/claude-sonnet-4-5; its provider's key comes from weft's
environment (ANTHROPIC_API_KEY, OPENAI_API_KEY), and set refuses a model
this configuration could not call. The model and fast model apply from a
conversation's next turn, the persona to conversations begun after it.
unset without flags unsets everything. An organisation's MCP servers are
set in WEFT_MCP_CONFIG ("organisations"); show and list print them.
`

// orgCmd sets, unsets, shows and lists organisations' agent settings.
func orgCmd(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) >= 2 && (args[0] == "set" || args[0] == "unset"), len(args) == 2 && args[0] == "show", len(args) == 1 && args[0] == "list":
	default:
		return badUsage(stderr, "org")
	}
	var change func(*thread.OrgSettings) error
	switch args[0] {
	case "set":
		var err error
		if change, err = orgSet(cfg, args[2:], stdout, stderr); change == nil {
			return err
		}
	case "unset":
		var err error
		if change, err = orgUnset(args[2:], stdout, stderr); change == nil {
			return err
		}
	}
	if len(args) > 1 {
		if err := thread.CheckOrganisation(args[1]); err != nil {
			return err
		}
	}
	store, pool, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	switch args[0] {
	case "set", "unset":
		s, err := store.UpdateOrgSettings(ctx, args[1], change)
		if err != nil {
			return err
		}
		if s.IsZero() {
			fmt.Fprintf(stdout, "%s is on the global settings.\n", args[1])
		} else {
			fmt.Fprintf(stdout, "Settings of %s saved.\n", args[1])
		}
		return nil
	case "show":
		o, err := store.OrganisationOf(ctx, args[1])
		if err != nil {
			return err
		}
		return showOrg(stdout, cfg, o)
	}
	orgs, err := store.Organisations(ctx)
	if err != nil {
		return err
	}
	if len(orgs) == 0 {
		fmt.Fprintln(stdout, "No organisation is named yet: every tenant is one of its own, on the global settings.")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ORGANISATION\tMODEL\tFAST MODEL\tPERSONA\tMCP SERVERS\tTENANTS")
	for _, o := range orgs {
		persona := "(global)"
		if o.Persona != "" {
			persona = excerpt(o.Persona, 40)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Organisation, ownOr(o.Model, globalModel(cfg)), ownOr(o.FastModel, globalFastModel(cfg)),
			persona, cmp.Or(strings.Join(cfg.MCP.ServersFor(o.Organisation), ","), "-"), cmp.Or(strings.Join(o.Tenants, ","), "-"))
	}
	return tw.Flush()
}

// orgSet reads set's flags: the change they make, nil when they are wrong
// (or -h) and err says why.
func orgSet(cfg *app.Config, args []string, stdout, stderr io.Writer) (func(*thread.OrgSettings) error, error) {
	fs := flag.NewFlagSet("org set", flag.ContinueOnError)
	model := fs.String("model", "", "the model that answers, PROVIDER/MODEL")
	fast := fs.String("fast-model", "", "the model that ranks relevant threads, PROVIDER/MODEL")
	personaFile := fs.String("persona-file", "", "a file holding the persona that opens its system prompts")
	if done, err := parseFlags(fs, args, orgUsage, stdout, stderr); done {
		return nil, err
	}
	if fs.NArg() > 0 || *model == "" && *fast == "" && *personaFile == "" {
		return nil, badUsage(stderr, "org")
	}
	var set thread.OrgSettings
	for _, m := range []struct {
		flag string
		to   *thread.ModelRef
	}{{*model, &set.Model}, {*fast, &set.FastModel}} {
		if m.flag == "" {
			continue
		}
		ref, err := thread.ParseModelRef(m.flag)
		if err != nil {
			return nil, err
		}
		if err := app.CheckModel(cfg, ref); err != nil {
			return nil, err
		}
		*m.to = ref
	}
	if *personaFile != "" {
		b, err := os.ReadFile(*personaFile)
		if err != nil {
			return nil, fmt.Errorf("persona: %w", err)
		}
		switch set.Persona = strings.TrimSpace(string(b)); {
		case set.Persona == "":
			return nil, fmt.Errorf("persona: %s is empty (weft org unset ORG --persona goes back to the global one)", *personaFile)
		case len(set.Persona) > thread.MaxPersona:
			return nil, fmt.Errorf("persona: %s holds %d bytes, more than %d", *personaFile, len(set.Persona), thread.MaxPersona)
		case strings.ContainsRune(set.Persona, 0):
			return nil, fmt.Errorf("persona: %s is not text", *personaFile)
		}
	}
	return func(s *thread.OrgSettings) error {
		if !set.Model.IsZero() {
			s.Model = set.Model
		}
		if !set.FastModel.IsZero() {
			s.FastModel = set.FastModel
		}
		if set.Persona != "" {
			s.Persona = set.Persona
		}
		return nil
	}, nil
}

// orgUnset reads unset's flags, as orgSet does.
func orgUnset(args []string, stdout, stderr io.Writer) (func(*thread.OrgSettings) error, error) {
	fs := flag.NewFlagSet("org unset", flag.ContinueOnError)
	model := fs.Bool("model", false, "go back to the global model")
	fast := fs.Bool("fast-model", false, "go back to the global fast model")
	persona := fs.Bool("persona", false, "go back to the global persona")
	if done, err := parseFlags(fs, args, orgUsage, stdout, stderr); done {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, badUsage(stderr, "org")
	}
	all := !*model && !*fast && !*persona
	return func(s *thread.OrgSettings) error {
		if all || *model {
			s.Model = thread.ModelRef{}
		}
		if all || *fast {
			s.FastModel = thread.ModelRef{}
		}
		if all || *persona {
			s.Persona = ""
		}
		return nil
	}, nil
}

func showOrg(w io.Writer, cfg *app.Config, o db.Organisation) error {
	persona := "(global)"
	if o.Persona != "" {
		persona = "\n" + indent(o.Persona)
	}
	updated := "never"
	if !o.UpdatedAt.IsZero() {
		updated = o.UpdatedAt.UTC().Format(time.RFC3339)
	}
	_, err := fmt.Fprintf(w, "Organisation: %s\nTenants:      %s\nModel:        %s\nFast model:   %s\nMCP servers:  %s\nSet:          %s\nPersona:      %s\n",
		o.Organisation, cmp.Or(strings.Join(o.Tenants, ", "), "-"), ownOr(o.Model, globalModel(cfg)), ownOr(o.FastModel, globalFastModel(cfg)),
		cmp.Or(strings.Join(cfg.MCP.ServersFor(o.Organisation), ", "), "-"), updated, persona)
	return err
}

// ownOr is an organisation's model, or the global one marked as such.
func ownOr(own thread.ModelRef, global string) string {
	if own.IsZero() {
		return global + " (global)"
	}
	return own.String()
}

func globalModel(cfg *app.Config) string { return cmp.Or(cfg.AgentModel(), "none") }

func globalFastModel(cfg *app.Config) string { return cmp.Or(cfg.AgentFastModel(), "none") }

func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
