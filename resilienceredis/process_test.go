package resilienceredis

const childEnv = "RESILIENCEREDIS_CHILD"

func childMain() int { return 0 }
