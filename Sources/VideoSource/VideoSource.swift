// VideoSource: see issues 3/4
