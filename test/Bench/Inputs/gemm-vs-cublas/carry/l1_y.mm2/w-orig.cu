// fake unit
