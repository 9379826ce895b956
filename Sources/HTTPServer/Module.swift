// HTTPServer module: see the files beside this one.
