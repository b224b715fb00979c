// Package commandinit is the first process of a run_command command's
// namespaces on Linux: the program that imports it, run again under the
// name Name, with MountProc or KeepProc and the command line as its
// arguments.
//
// It is the one step between the privilege needed to mount a /proc of the
// new PID namespace and a command that must hold none: a shell cannot drop
// capabilities, and a process the Go runtime starts can only be given one
// set of them. As init it mounts /proc, makes itself unreadable through
// it, gives up every capability and the right to gain one, then runs
// /bin/sh -c command as its child, reaps whatever is orphaned to it, and
// exits with the command's status (a command killed by signal N shows as
// exit code 128+N). Its exit ends every process left in the namespace.
//
// The check for Name is a package init function, and this package imports
// only the standard library, so that it runs before the heavier
// initialisation of the program's other packages.
package commandinit
