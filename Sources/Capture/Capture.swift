// Capture: see issues 3/4
