// A plain simple-dual-port memory (registered read), to see what Yosys alone spends on the
// read multiplexers of a deep, wide RAM.
module memory #(parameter W=72, D=7282, A=13) (input clk, input we, input [A-1:0] wa, ra, input [W-1:0] wd, output reg [W-1:0] rd);
  reg [W-1:0] mem [0:D-1];
  always @(posedge clk) begin rd <= mem[ra]; if (we) mem[wa] <= wd; end
endmodule
