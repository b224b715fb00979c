package todo

// windowsOnly is excluded on other systems by its file name.
func windowsOnly() {}
