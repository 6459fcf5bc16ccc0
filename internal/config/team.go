package config

// MaxAgents is the most agents a team may have: twice upstream's largest
// example (fifty_gemini_agents.yaml). Every agent sees every answer, so a
// run's work grows with the square of the team: on the simulator 100
// agents take 0.7 s and 280 MB, 500 took 13 s past a 5 s deadline and
// 1.4 GB, 5000 never ended.
const MaxAgents = 100
