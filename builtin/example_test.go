package builtin_test

import (
	"fmt"
	"log"
	"os"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
)

// A ready set by reference, with defaults: the files tools are confined to
// the current directory.
func ExampleTools() {
	// snippet:tools
	tools, err := builtin.Tools("todo", "files")
	if err != nil {
		log.Fatal(err)
	}
	agent, err := onion.NewAgent("helper", tools)
	// end snippet:tools
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	for _, t := range agent.Tools().All() {
		fmt.Print(t.Name(), " ")
	}
	fmt.Println()
	// Output: add complete list remove delete_file glob grep list_files read_file write_file
}

// Constructors take the settings Tools leaves at their defaults.
func Example_constructors() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cwd, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		log.Fatal(err)
	}
	defer os.Chdir(cwd)
	if err := os.Mkdir("workspace", 0o755); err != nil {
		log.Fatal(err)
	}
	// snippet:constructors
	files, err := builtin.NewFiles("./workspace", builtin.MaxFileBytes(1<<20))
	if err != nil {
		log.Fatal(err)
	}
	shell := builtin.NewShell(builtin.ShellDir("./workspace"), builtin.ReadOnlyCommands("ls", "wc"))
	mem, err := builtin.NewMemory("memory.json")
	if err != nil {
		log.Fatal(err)
	}
	agent, err := onion.NewAgent("helper", files, shell, mem)
	// end snippet:constructors
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	fmt.Println(len(agent.Tools().All()), "tools")
	// Output: 11 tools
}
