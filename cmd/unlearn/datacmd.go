package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
)

// dataCommand lists a split example by example (data.List): the ids a
// forget file refers to and, for image folders, the file each one is.
func dataCommand() *cli.Command {
	return &cli.Command{
		Name: "data",
		Usage: "list a dataset's examples: id, label, class and (image folders) file, the ids " +
			"--forget refers to",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Usage: "dataset, as for the other commands (default: the bundled " +
				"Fashion-MNIST subset)"},
			&cli.StringFlag{Name: "split", Value: "train", Usage: "train (the ids of --forget) or test"},
			&cli.StringFlag{Name: "json", Usage: "write the listing as JSON to `FILE` (- for stdout) " +
				"instead of the table"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unexpected arguments %v", c.Args().Slice())
			}
			if s := c.String("split"); s != "train" && s != "test" {
				return usagef("--split %q: must be train or test", s)
			}
			if err := outs.CheckFlags(c, "json"); err != nil {
				return err
			}
			ds, err := openData(c)
			if err != nil {
				return err
			}
			l, err := data.List(ds, c.String("split"))
			if err != nil {
				return err
			}
			if p := c.String("json"); p != "" {
				return writeJSON(c, p, l)
			}
			return l.WriteText(c.App.Writer)
		},
	}
}
