print("screencast-agent: not yet built")
