package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/internal/suggest"
)

// cmdData dispatches "amt data fetch" and "amt data inspect".
func cmdData(ctx context.Context, env *cliEnv, args []string) error {
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "Usage:")
		fmt.Fprintln(w, "  amt data fetch cifar10 [-dir DIR] [-url URL] [-md5 HEX]")
		fmt.Fprintln(w, "  amt data inspect [-format cifar10|idx|fashion-mnist|coco|folder] [-images DIR] [-labels FILE] [-check] FILE|DIR")
		fmt.Fprintln(w)
		fmt.Fprintln(w, `Run "amt data fetch -h" or "amt data inspect -h" for their flags.`)
	}
	if len(args) == 0 {
		usage(env.stderr)
		return errUsage
	}
	switch args[0] {
	case "fetch":
		return dataFetch(ctx, env, args[1:])
	case "inspect":
		return dataInspect(ctx, env, args[1:])
	case "-h", "-help", "--help", "help":
		usage(env.stdout)
		return nil
	}
	usage(env.stderr)
	return usagef("data: unknown subcommand %q%s (want fetch or inspect)", args[0], suggest.DidYouMean(args[0], []string{"fetch", "inspect"}))
}

func dataFetch(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "data fetch", "cifar10 [-dir DIR] [-url URL] [-md5 HEX]")
	dir := fs.String("dir", "cifar10", "folder to download and extract into (created if needed)")
	url := fs.String("url", data.CIFAR10URL, "archive URL (a mirror)")
	sum := fs.String("md5", data.CIFAR10MD5, "expected md5 of the archive")
	// Allow "cifar10" before or after the flags.
	var names []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(names) != 1 || names[0] != "cifar10" {
		return showUsagef(fs, "data fetch: want exactly one data set name, cifar10 (the only one that can be fetched), got %q", names)
	}
	p := experiments.NewProgress(env.stderr)
	stage := experiments.Stage{Name: "download cifar-10", Unit: "kilobyte"}
	kB := func(n int64) int { return int((n + 999) / 1000) }
	progress := func(done, total int64) {
		if total >= 0 { // a server that does not give the size gets no progress display
			p.Report(stage, kB(done), kB(total))
		}
	}
	file, err := data.FetchCIFAR10(ctx, *dir, data.FetchOptions{URL: *url, MD5: *sum, Progress: progress})
	p.Done()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.stdout, "CIFAR-10 test set ready: %s\n", file)
	return err
}

func dataInspect(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "data inspect", "[-format cifar10|idx|fashion-mnist|coco|folder] [-images DIR] [-labels FILE] [-check] [-max-pixels N] FILE|DIR")
	format := fs.String("format", "", "data set format (default: a folder is \"folder\", a .json file \"coco\", an IDX file (\"idx\" or \"ubyte\" in its name) \"idx\", any other file \"cifar10\")")
	images := fs.String("images", "", "COCO image folder (default: found next to the JSON file)")
	labels := fs.String("labels", "", "IDX label file (default: the image file's name with images-idx3 replaced by labels-idx1, when it exists)")
	check := fs.Bool("check", false, "decode every image and report the ones that fail")
	maxPixels := fs.Int64("max-pixels", data.DefaultMaxPixels, "the image budget: images of more pixels (width × height) are refused")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return showUsagef(fs, "data inspect: want one FILE or DIR, got %d arguments", fs.NArg())
	}
	src, err := data.Open(data.Spec{Format: *format, Path: fs.Arg(0), Images: *images, Labels: *labels, MaxPixels: *maxPixels})
	if err != nil {
		return err
	}
	if err := printInfo(env.stdout, src.Info()); err != nil {
		return err
	}
	if *check {
		return checkSource(ctx, env.stdout, src)
	}
	return nil
}

// printInfo writes a data set description.
func printInfo(w io.Writer, info data.Info) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "format:\t%s\n", info.Format)
	fmt.Fprintf(tw, "path:\t%s\n", info.Path)
	switch info.Format {
	case "cifar10":
		fmt.Fprintf(tw, "records:\t%d (%d×%d RGB)\n", info.Len, info.Width, info.Height)
		fmt.Fprintf(tw, "classes:\t%d\n", len(info.Classes))
	case "idx", "fashion-mnist":
		fmt.Fprintf(tw, "images:\t%d (%d×%d grey, read as RGB with R = G = B: grayscale is the identity on them)\n", info.Len, info.Width, info.Height)
		if len(info.Classes) == 0 {
			fmt.Fprintf(tw, "labels:\tnone (no label file)\n")
		} else {
			fmt.Fprintf(tw, "classes:\t%d\n", len(info.Classes))
		}
	case "coco":
		fmt.Fprintf(tw, "image folder:\t%s\n", info.ImageDir)
		fmt.Fprintf(tw, "images:\t%d (%d without annotations)\n", info.Len, info.Unannotated)
		fmt.Fprintf(tw, "annotations:\t%d (%d crowd)\n", info.Annotations, info.Crowd)
		fmt.Fprintf(tw, "categories:\t%d\n", len(info.Classes))
	default:
		fmt.Fprintf(tw, "images:\t%d (unlabelled)\n", info.Len)
		if n := len(info.Skipped); n > 0 {
			fmt.Fprintf(tw, "skipped:\t%s\n", plural.Count(n, "file"))
			for _, s := range info.Skipped {
				fmt.Fprintf(tw, "\t%s\n", s)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(info.Classes) == 0 {
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if info.Format == "coco" {
		fmt.Fprintln(tw, "  class\tid\tname\tannotations\timages")
		for _, c := range info.Classes {
			fmt.Fprintf(tw, "  %d\t%d\t%s\t%d\t%d\n", c.Index, c.ID, c.Name, c.Count, c.Images)
		}
	} else {
		fmt.Fprintln(tw, "  label\tname\trecords")
		for _, c := range info.Classes {
			fmt.Fprintf(tw, "  %d\t%s\t%d\n", c.Index, c.Name, c.Count)
		}
	}
	return tw.Flush()
}

// checkSource decodes every case and reports the failures.
func checkSource(ctx context.Context, w io.Writer, src data.Source) error {
	var failed []error
	for i := 0; i < src.Len(); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := src.Case(i); err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) == 0 {
		_, err := fmt.Fprintf(w, "check: all %d images decode\n", src.Len())
		return err
	}
	for _, err := range failed[:min(len(failed), 10)] {
		fmt.Fprintf(w, "  %v\n", err)
	}
	if len(failed) > 10 {
		fmt.Fprintf(w, "  … and %d more\n", len(failed)-10)
	}
	return fmt.Errorf("data inspect: %d of %d images failed to decode: %w", len(failed), src.Len(), failed[0])
}
